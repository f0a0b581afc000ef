pub mod distribution;
pub mod hostile;
