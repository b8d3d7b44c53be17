//! ENFORCE mode (DESIGN §4; IRS paper §4): the enforcer that makes every run contain the verified
//! prefix, the serialised runs for what no verification covers, and chaos (`--chaos`), which shakes
//! schedules.

pub(crate) mod enforcer;
pub(crate) mod serial;
pub(crate) mod chaos;
pub(crate) mod event;
pub(crate) mod relaxed;
