//! Permission policy (filled in by the permissions work).
