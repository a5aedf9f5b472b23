mod headless;
mod kill;
mod permissions;
mod replay;
mod sessions;
