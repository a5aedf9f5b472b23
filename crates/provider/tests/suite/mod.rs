//! One module per concern; `support` holds the shared helpers.

mod bad_input;
mod conformance;
mod encoding;
mod pairing;
mod retry;
mod split;
mod support;
