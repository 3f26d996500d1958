//! `ocview archive import FILE…` and every file the viewer replays: read
//! with the replay reader (every form ocview reads), written a batch at a
//! time. Importing a file twice adds nothing; each batch records how far
//! the file is in (`super::resume`), so an import killed half-way resumes
//! after its last committed batch and a finished one is skipped.

use std::path::Path;
use std::sync::atomic::Ordering;

use crate::archive::engine::Engine;
use crate::archive::import_read::{Planned, Said, prepare_all, read_all};
use crate::archive::keeper::Keeper;
use crate::archive::progress::Step;
use crate::archive::resume::{self, Checkpoint, FileMark, Start};
use crate::archive::rows::{Batch, PartRow, Written};

/// Batches written between two looks at the archive's limits (a bounded
/// import keeps the archive within them as it goes, not only at its end).
const PRUNE_EVERY: u32 = 50;
/// The longest between two progress reports while a file is read.
const REPORT_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// What one file added.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// Records read (those the archive already held included).
    pub records: u64,
    /// Sessions the file holds.
    pub sessions: usize,
    pub written: Written,
    /// What it gave the archive, new or not: after a resume, only the rows
    /// of the records past the checkpoint (what shows it skipped the rest
    /// rather than writing it again).
    pub sent: Written,
    /// The form it was read as.
    pub form: Option<&'static str>,
    /// The archive already held the first this many records (a resumed
    /// import): they were read again but not written.
    pub resumed_at: Option<u64>,
    /// The archive already held all of it: nothing was read.
    pub already: bool,
}

/// Import `path` (`-` is standard input). An error is one line naming the
/// file or the archive.
pub fn import_file(engine: &mut dyn Engine, path: &Path) -> Result<Imported, String> {
    import_file_with(engine, path, &mut |_| {})
}

/// As `import_file`, telling `on` where it resumed and how far it has read.
pub fn import_file_with(
    engine: &mut dyn Engine,
    path: &Path,
    on: &mut dyn FnMut(Step),
) -> Result<Imported, String> {
    let mut sink = Direct {
        engine,
        bound: None,
    };
    import_one(&mut sink, path, on)
}

/// The limits an import keeps the archive within as it goes, and where it
/// says what it pruned.
#[derive(Clone, Copy)]
pub struct Bound<'a> {
    pub limits: crate::archive::Limits,
    pub say: &'a dyn Fn(String),
}

/// `import_file_with` for each of `paths`, pruning the archive to
/// `bound`'s limits every so many batches and at each file's end
/// (`ocview archive import`): `on(i, step)` for file `i`, `done(i, result)`
/// for each in order. The next file is read while the last is written.
pub fn import_files_within(
    engine: &mut dyn Engine,
    paths: &[&Path],
    bound: Bound<'_>,
    on: &mut dyn FnMut(usize, Step),
    done: &mut dyn FnMut(usize, Result<Imported, String>),
) {
    let mut sink = Direct {
        engine,
        bound: Some(bound),
    };
    import_into(&mut sink, paths, on, done);
}

/// As `import_files_within`, through a keeper: while PostgreSQL is away
/// the batches are spooled, and written when it is back (`written` counts
/// only what was written at once).
pub fn import_files_kept(
    keeper: &mut Keeper,
    paths: &[&Path],
    bound: Bound<'_>,
    on: &mut dyn FnMut(usize, Step),
    done: &mut dyn FnMut(usize, Result<Imported, String>),
) {
    import_into(&mut Kept { keeper, bound }, paths, on, done);
}

/// One file through `import_into`.
fn import_one(
    sink: &mut dyn Sink,
    path: &Path,
    on: &mut dyn FnMut(Step),
) -> Result<Imported, String> {
    let mut result = None;
    import_into(sink, &[path], &mut |_, step| on(step), &mut |_, r| {
        result = Some(r)
    });
    result.unwrap_or_else(|| Err(format!("reading {} failed", shown_path(path))))
}

/// Where an import's batches go.
trait Sink {
    /// How far the archive holds `file` (`None` when it cannot tell: the
    /// import then starts over, and its upserts add nothing twice).
    fn checkpoint(&mut self, file: &str) -> Result<Option<Checkpoint>, String>;
    fn write(&mut self, batch: &Batch) -> Result<Written, String>;
    /// Prune the archive to its limits, when the import has any.
    fn keep_within(&mut self) {}
    /// Whether what it writes is redacted (its policy, for its kind).
    fn redacts(&self) -> bool {
        false
    }
    /// How its parts' rows are prepared ahead (`Engine::rows_ahead`).
    fn rows_ahead(&self) -> Option<fn(&mut PartRow)> {
        None
    }
    /// The import starts or has ended (`Engine::bulk`).
    fn bulk(&mut self, _on: bool) {}
}

/// Straight into an archive.
struct Direct<'a, 'b> {
    engine: &'a mut dyn Engine,
    bound: Option<Bound<'b>>,
}

impl Sink for Direct<'_, '_> {
    fn checkpoint(&mut self, file: &str) -> Result<Option<Checkpoint>, String> {
        self.engine.checkpoint(file).map_err(|e| e.to_string())
    }

    fn write(&mut self, batch: &Batch) -> Result<Written, String> {
        self.engine.write(batch).map_err(|e| e.to_string())
    }

    fn keep_within(&mut self) {
        if let Some(b) = self.bound {
            crate::archive::bounded::keep_within(self.engine, &b.limits, b.say, false);
        }
    }

    fn redacts(&self) -> bool {
        crate::redact::policy().redacts(self.engine.shared())
    }

    fn rows_ahead(&self) -> Option<fn(&mut PartRow)> {
        self.engine.rows_ahead()
    }

    fn bulk(&mut self, on: bool) {
        self.engine.bulk(on);
    }
}

/// Through a keeper that spools while PostgreSQL is away.
struct Kept<'a, 'b> {
    keeper: &'a mut Keeper,
    bound: Bound<'b>,
}

impl Sink for Kept<'_, '_> {
    fn checkpoint(&mut self, file: &str) -> Result<Option<Checkpoint>, String> {
        match self.keeper.engine() {
            Some(engine) => engine.checkpoint(file).map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }

    fn write(&mut self, batch: &Batch) -> Result<Written, String> {
        self.keeper.retry(self.bound.say);
        let written = self
            .keeper
            .write(batch, self.bound.say)
            .map_err(|e| e.to_string())?;
        Ok(written.unwrap_or_default())
    }

    fn redacts(&self) -> bool {
        // A keeper stands for PostgreSQL.
        crate::redact::policy().redacts(true)
    }

    fn rows_ahead(&self) -> Option<fn(&mut PartRow)> {
        // Made ahead only while connected: a spooled batch keeps none.
        self.keeper.rows_ahead()
    }

    fn bulk(&mut self, on: bool) {
        if let Some(engine) = self.keeper.engine() {
            engine.bulk(on);
        }
    }

    fn keep_within(&mut self) {
        // While PostgreSQL is away there is nothing to prune.
        if let Some(engine) = self.keeper.engine() {
            let b = self.bound;
            crate::archive::bounded::keep_within(engine, &b.limits, b.say, false);
        }
    }
}

/// Each file's result, once it has one.
type Results = Vec<Option<Result<Imported, String>>>;

/// Import `paths` in order on two threads: the reading stage goes on to
/// the next file while the last batches of the one before are written,
/// so a folder of small recordings keeps both busy. `on(i, step)` says
/// how far file `i` has come; `done(i, result)` is called for each file,
/// in order. A write that fails stops the import: the files after it are
/// said not imported.
fn import_into(
    engine: &mut dyn Sink,
    paths: &[&Path],
    on: &mut dyn FnMut(usize, Step),
    done: &mut dyn FnMut(usize, Result<Imported, String>),
) {
    let mut results: Results = vec![None; paths.len()];
    let mut outs: Vec<Imported> = vec![Imported::default(); paths.len()];
    let mut said = 0;
    let mut say = |results: &mut Results| {
        while let Some(Some(r)) = results.get_mut(said).map(Option::take) {
            done(said, r);
            said += 1;
        }
    };
    let planned = plan(engine, paths, &mut results);
    let shown: Vec<String> = paths.iter().map(|p| shown_path(p)).collect();
    let redacts = engine.redacts();
    let prepare = engine.rows_ahead();
    // Three stages on their threads: reading, decoding and collecting;
    // preparing (redaction, the parts' documents, the log's blocks); and
    // writing, the slowest, which then only writes. The system shares two
    // cores among them as each has work. Three messages may wait between
    // reading and preparing: a file's last batch, its end and the next
    // file's start, so the reader goes on to the next file while that
    // batch is written (one would hold it).
    let (tx, rx) = std::sync::mpsc::sync_channel::<Said>(3);
    let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel::<Said>(1);
    // Batches written go back to be let go of off the writer's thread.
    let (written_tx, written_rx) = std::sync::mpsc::channel::<Box<Batch>>();
    let failed = std::thread::scope(|scope| {
        let producer = std::thread::Builder::new()
            .name("import-read".into())
            .spawn_scoped(scope, move || read_all(planned, &tx));
        let producer = match producer {
            Ok(p) => p,
            Err(e) => return Some(format!("cannot start reading: {e}")),
        };
        let preparer = std::thread::Builder::new()
            .name("import-prepare".into())
            .spawn_scoped(scope, move || {
                prepare_all(&rx, redacts, prepare, &written_rx, &ready_tx)
            });
        let preparer = match preparer {
            Ok(p) => p,
            // The reader stops at its next message, its channel closed.
            Err(e) => return Some(format!("cannot start preparing: {e}")),
        };
        engine.bulk(true);
        let failed = write_all(
            engine,
            &ready_rx,
            &written_tx,
            on,
            &mut outs,
            &mut results,
            &mut say,
        );
        drop(ready_rx);
        // Joined here, not by the scope: a stage that panicked leaves its
        // file said failed, not the whole import.
        let _ = preparer.join();
        let _ = producer.join();
        engine.bulk(false);
        failed
    });
    // The files the import did not reach.
    for (i, r) in results.iter_mut().enumerate() {
        if r.is_none() {
            *r = Some(Err(match &failed {
                Some(why) => format!("{}: not imported ({why})", shown[i]),
                None => format!("reading {} failed", shown[i]),
            }));
        }
    }
    say(&mut results);
}

/// A path as messages name it.
fn shown_path(path: &Path) -> String {
    crate::model::wire::sanitize::line(&path.display().to_string()).into_owned()
}

/// Each file's mark and where the archive has it: a file it holds whole
/// is done already (`results`), as is one named twice.
fn plan(engine: &mut dyn Sink, paths: &[&Path], results: &mut Results) -> Vec<Planned> {
    let mut planned: Vec<Planned> = Vec::new();
    for (file, path) in paths.iter().enumerate() {
        let shown = shown_path(path);
        let stdin = path.as_os_str() == "-";
        // Standard input has no identity to resume by.
        let mark = match stdin {
            true => None,
            false => match FileMark::of(path) {
                Ok(m) => Some(m),
                Err(e) => {
                    results[file] = Some(Err(format!("cannot read {shown}: {e}")));
                    continue;
                }
            },
        };
        let start = match &mark {
            Some(m) if planned.iter().any(|p| p.mark.as_ref() == Some(m)) => Start::Done,
            Some(m) => match engine.checkpoint(&m.file) {
                Ok(recorded) => resume::start(m, recorded.as_ref()),
                Err(e) => {
                    results[file] = Some(Err(e));
                    continue;
                }
            },
            None => Start::Fresh,
        };
        let resume = match start {
            Start::Done => {
                results[file] = Some(Ok(Imported {
                    already: true,
                    ..Imported::default()
                }));
                continue;
            }
            Start::Resume { records, bytes } => Some((records.max(0) as u64, bytes.max(0) as u64)),
            Start::Fresh => None,
        };
        planned.push(Planned {
            file,
            path: path.to_path_buf(),
            shown,
            mark,
            resume,
        });
    }
    planned
}

/// The writing stage: each batch the reading stage sends written, how far
/// the file being read is said at least every `REPORT_EVERY`, and each
/// file's result set as it ends (`say` tells them, in order). The error
/// of a write that failed: the reader then stops at its next batch.
fn write_all(
    engine: &mut dyn Sink,
    rx: &std::sync::mpsc::Receiver<Said>,
    written: &std::sync::mpsc::Sender<Box<Batch>>,
    on: &mut dyn FnMut(usize, Step),
    outs: &mut [Imported],
    results: &mut Results,
    say: &mut dyn FnMut(&mut Results),
) -> Option<String> {
    let mut reading: Option<(usize, std::sync::Arc<std::sync::atomic::AtomicU64>, u64)> = None;
    let mut said = None;
    let mut since_pruned = 0;
    loop {
        let heard = match rx.recv_timeout(REPORT_EVERY) {
            Ok(heard) => Some(heard),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
        };
        if since_pruned >= PRUNE_EVERY {
            since_pruned = 0;
            engine.keep_within();
        }
        if let Some((file, read, total)) = &reading {
            let bytes = read.load(Ordering::Relaxed);
            if said != Some(bytes) {
                said = Some(bytes);
                on(
                    *file,
                    Step::Read {
                        bytes,
                        total: *total,
                    },
                );
            }
        }
        match heard {
            None => {}
            Some(Said::Opened {
                file,
                read,
                total,
                resume,
            }) => {
                if let Some((records, bytes)) = resume {
                    on(
                        file,
                        Step::Resumed {
                            records,
                            bytes,
                            total,
                        },
                    );
                    outs[file].resumed_at = Some(records);
                }
                reading = Some((file, read, total));
                said = None;
            }
            Some(Said::Batch { file, batch }) => {
                let out = &mut outs[file];
                out.sent.events += batch.events.len() as u64;
                out.sent.parts += batch.parts.len() as u64;
                since_pruned += 1;
                match engine.write(&batch) {
                    Ok(w) => {
                        out.written.events += w.events;
                        out.written.parts += w.parts;
                        // Let go of on the preparing stage's thread (or
                        // here, when it has gone).
                        let _ = written.send(batch);
                    }
                    Err(e) => {
                        results[file] = Some(Err(e.clone()));
                        return Some(e);
                    }
                }
            }
            Some(Said::Ended { file, result }) => {
                if let Some((_, read, total)) = reading.take().filter(|r| r.0 == file) {
                    let bytes = read.load(Ordering::Relaxed);
                    on(file, Step::Read { bytes, total });
                }
                // The whole file in: within the limits at its end too.
                engine.keep_within();
                results[file] = Some(result.map(|all| {
                    let out = &mut outs[file];
                    out.records = all.records;
                    out.sessions = all.sessions;
                    out.form = all.form;
                    out.clone()
                }));
                say(results);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::import_read::BATCH;

    /// A sink that keeps what each batch said, and fails at write `fail_at`.
    struct Seen {
        batches: Vec<(usize, Option<(i64, bool)>)>,
        fail_at: Option<usize>,
    }

    impl Sink for Seen {
        fn checkpoint(&mut self, _file: &str) -> Result<Option<Checkpoint>, String> {
            Ok(None)
        }

        fn write(&mut self, batch: &Batch) -> Result<Written, String> {
            if self.fail_at == Some(self.batches.len()) {
                return Err("the disk is full".into());
            }
            let mark = batch.checkpoint.as_ref().map(|c| (c.records, c.done));
            self.batches.push((batch.parts.len(), mark));
            Ok(Written::default())
        }
    }

    /// A file of `parts` part updates in one session.
    fn parts_file(parts: usize) -> tempfile::NamedTempFile {
        use std::io::Write;
        let mut f = tempfile::NamedTempFile::new().unwrap();
        for i in 0..parts {
            let line = serde_json::json!({"type": "message.part.updated", "properties": {"part": {
                "id": format!("prt_{i:06}"), "messageID": "msg_1", "sessionID": "ses_1",
                "type": "text", "text": format!("word {i}")}}});
            writeln!(f, "{line}").unwrap();
        }
        f.flush().unwrap();
        f
    }

    #[test]
    fn batches_reach_the_writer_in_order_each_with_its_checkpoint() {
        let file = parts_file(3 * BATCH + 7);
        let mut sink = Seen {
            batches: Vec::new(),
            fail_at: None,
        };
        let out = import_one(&mut sink, file.path(), &mut |_| {}).unwrap();
        assert_eq!(out.records, (3 * BATCH + 7) as u64);
        let parts: usize = sink.batches.iter().map(|b| b.0).sum();
        assert_eq!(parts, 3 * BATCH + 7);
        let marks: Vec<(i64, bool)> = sink.batches.iter().filter_map(|b| b.1).collect();
        assert_eq!(marks.len(), sink.batches.len(), "{marks:?}");
        assert!(marks.windows(2).all(|w| w[0].0 < w[1].0), "{marks:?}");
        assert_eq!(marks.last(), Some(&((3 * BATCH + 7) as i64, true)));
        assert!(marks[..marks.len() - 1].iter().all(|m| !m.1), "{marks:?}");
    }

    #[test]
    fn a_failed_write_stops_the_reading_and_says_why() {
        let file = parts_file(20 * BATCH);
        let mut sink = Seen {
            batches: Vec::new(),
            fail_at: Some(1),
        };
        let err = import_one(&mut sink, file.path(), &mut |_| {}).unwrap_err();
        assert!(err.contains("the disk is full"), "{err}");
        assert_eq!(sink.batches.len(), 1);
    }

    /// Each file's result, in order, from one import of `paths`.
    fn each(sink: &mut Seen, paths: &[&Path]) -> Vec<(usize, Result<Imported, String>)> {
        let mut got = Vec::new();
        import_into(sink, paths, &mut |_, _| {}, &mut |i, r| got.push((i, r)));
        got
    }

    #[test]
    fn files_are_imported_one_after_another_each_said_in_order() {
        let (a, b) = (parts_file(BATCH + 3), parts_file(5));
        let missing = std::path::PathBuf::from("/nonexistent/ocview-import.jsonl");
        let mut sink = Seen {
            batches: Vec::new(),
            fail_at: None,
        };
        let got = each(&mut sink, &[a.path(), &missing, b.path(), a.path()]);
        let order: Vec<usize> = got.iter().map(|g| g.0).collect();
        assert_eq!(order, [0, 1, 2, 3]);
        assert_eq!(got[0].1.as_ref().unwrap().records, (BATCH + 3) as u64);
        let err = got[1].1.as_ref().unwrap_err();
        assert!(
            err.contains("cannot read") && err.contains("ocview-import.jsonl"),
            "{err}"
        );
        assert_eq!(got[2].1.as_ref().unwrap().records, 5);
        // Named twice in one import: read once.
        assert!(got[3].1.as_ref().unwrap().already);
        // Each file's batches end with its own finished checkpoint.
        let ends: Vec<(i64, bool)> = sink
            .batches
            .iter()
            .filter_map(|b| b.1)
            .filter(|m| m.1)
            .collect();
        assert_eq!(ends, [((BATCH + 3) as i64, true), (5, true)]);
    }

    #[test]
    fn a_failed_write_leaves_the_files_after_it_said_not_imported() {
        let (a, b) = (parts_file(BATCH + 3), parts_file(5));
        let mut sink = Seen {
            batches: Vec::new(),
            fail_at: Some(1),
        };
        let got = each(&mut sink, &[a.path(), b.path()]);
        assert_eq!(got.len(), 2);
        assert!(got[0].1.as_ref().unwrap_err().contains("the disk is full"));
        let err = got[1].1.as_ref().unwrap_err();
        assert!(
            err.contains("not imported") && err.contains("the disk is full"),
            "{err}"
        );
    }
}
