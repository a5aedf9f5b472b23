mod servers;
pub mod support;
