//! What belongs to the program as a whole (DESIGN §4 "Inputs", §7): its start (`__irs_start`, which
//! picks the mode), its end (the process's `End` event, exit handlers), the SV-COMP interface, the
//! input files and environment it reads, and the records of its sites.

pub(crate) mod start;
pub(crate) mod elapsed;
pub(crate) mod process_end;
pub(crate) mod exit_handlers;
pub(crate) mod sv_comp;
pub(crate) mod input_env;
pub(crate) mod input_files;
pub(crate) mod input_stat;
pub(crate) mod program_info;
