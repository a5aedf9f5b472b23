//! Integration tests of lathe-policy: decisions over real files in temp dirs.

mod suite;
