mod headless;
mod replay;
