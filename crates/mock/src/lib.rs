//! Mock.
