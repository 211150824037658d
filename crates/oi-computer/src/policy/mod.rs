//! What the user and the machine set: limits, secrets and the environment, oi's protected
//! directories, the sandbox policy and what this machine supports of it.

pub(crate) mod environment;
pub(crate) mod limits;
pub(crate) mod protected;
pub(crate) mod sandbox_policy;
pub(crate) mod sandbox_support;
