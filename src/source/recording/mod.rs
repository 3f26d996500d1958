//! Recordings: a file or standard input read record by record in any form
//! (`replay`), played as it happened or at a chosen pace (`player`, on the
//! clock of `source::timeline::playback`); and a live stream written to a
//! file as it comes (`recorder`). A file the viewer can seek in is indexed
//! by `source::timeline`.

pub mod player;
pub mod recorder;
pub mod replay;
