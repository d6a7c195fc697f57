//! Reference resolution (§5.2). In progress.

/// Resolution error.
#[derive(Debug)]
pub struct ResolveError;
/// Resolver.
pub struct Resolver;
/// Resolve.
pub fn resolve() {}
