//! RECORD mode (DESIGN §2): every visible event serialised and written to a trace whose order is a
//! real linearisation of the run.

pub(crate) mod recorder;
