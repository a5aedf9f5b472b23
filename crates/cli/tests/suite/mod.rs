mod headless;
mod kill;
mod replay;
mod sessions;
mod tmux;
mod tui;
