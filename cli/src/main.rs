//! The `capbridge` command line.
fn main() {}
