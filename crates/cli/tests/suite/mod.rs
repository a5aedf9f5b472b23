mod headless;
mod kill;
mod replay;
mod sessions;
