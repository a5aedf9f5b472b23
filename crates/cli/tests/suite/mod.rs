mod headless;
mod kill;
mod msrv;
mod replay;
mod sessions;
