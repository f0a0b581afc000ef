pub mod hostile;
pub mod registry;
