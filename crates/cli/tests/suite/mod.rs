mod faults_session;
mod faults_stream;
mod faults_tools;
mod harness;
mod headless;
mod kill;
mod replay;
mod sessions;
