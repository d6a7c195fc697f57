//! Owned component model. In progress.

/// Components.
pub struct Components;
