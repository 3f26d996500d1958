//! Searching runs on a thread of its own, over shared snapshots of the
//! sessions (`Arc<Session>`, copy on write in the store): a query never
//! holds up a key or a frame. A newer query cancels the one being run; the
//! results wait in a mailbox and the loop is woken to read them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::model::Session;
use crate::model::entity::search::{Hit, Query, Scan, TextCache, count_in_session};

/// How often a search across sessions reports its progress.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

pub enum Job {
    /// Prepare a session's searchable text while the query is typed (a
    /// newer session job stops it: the search warms what it scans anyway).
    Warm {
        generation: u64,
        session: Arc<Session>,
    },
    /// Hits in one session; the first one at or after message `from` is
    /// reported on its own first.
    Session {
        generation: u64,
        session: Arc<Session>,
        query: Query,
        from: usize,
    },
    /// Hit counts of every session, for the session list.
    Sessions {
        generation: u64,
        sessions: Vec<Arc<Session>>,
        query: Query,
    },
}

#[derive(Debug)]
pub enum Found {
    First {
        generation: u64,
        hit: Option<Hit>,
    },
    Session {
        generation: u64,
        hits: Vec<Hit>,
    },
    /// Hit counts of the sessions searched so far (every one when
    /// `searched == total`).
    Sessions {
        generation: u64,
        counts: Vec<(String, usize)>,
        searched: usize,
        total: usize,
    },
}

#[derive(Default)]
struct Shared {
    /// The newest generation asked for, per kind: older jobs stop.
    latest_session: AtomicU64,
    latest_sessions: AtomicU64,
    found: Mutex<Vec<Found>>,
    wake: Arc<Notify>,
}

pub struct SearchWorker {
    shared: Arc<Shared>,
    /// `None`: search inline, at once (tests and headless output).
    jobs: Option<mpsc::Sender<Job>>,
    inline_cache: Mutex<TextCache>,
    next_generation: u64,
}

impl SearchWorker {
    /// A worker with its own thread.
    pub fn spawn() -> SearchWorker {
        let shared = Arc::new(Shared::default());
        let (tx, rx) = mpsc::channel::<Job>();
        let worker = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("ocview-search".into())
            .spawn(move || {
                let mut cache = TextCache::default();
                while let Ok(job) = rx.recv() {
                    // Only the newest job of each kind is worth running.
                    let mut jobs = vec![job];
                    jobs.extend(rx.try_iter());
                    let newest = newest_of_each(jobs);
                    for job in newest {
                        run(&worker, job, &mut cache);
                    }
                }
            });
        SearchWorker {
            shared,
            jobs: spawned.is_ok().then_some(tx),
            inline_cache: Mutex::new(TextCache::default()),
            next_generation: 1,
        }
    }

    /// A worker that searches on the caller's thread.
    pub fn inline() -> SearchWorker {
        SearchWorker {
            shared: Arc::new(Shared::default()),
            jobs: None,
            inline_cache: Mutex::new(TextCache::default()),
            next_generation: 1,
        }
    }

    pub fn generation(&mut self) -> u64 {
        self.next_generation += 1;
        self.next_generation
    }

    pub fn submit(&self, job: Job) {
        match &job {
            Job::Session { generation, .. } | Job::Warm { generation, .. } => {
                self.shared
                    .latest_session
                    .store(*generation, Ordering::SeqCst);
            }
            Job::Sessions { generation, .. } => {
                self.shared
                    .latest_sessions
                    .store(*generation, Ordering::SeqCst);
            }
        }
        match &self.jobs {
            Some(tx) => {
                if let Err(mpsc::SendError(job)) = tx.send(job) {
                    // The thread is gone (it cannot panic on its own, but
                    // be safe): search here instead.
                    let mut cache = self.inline_cache.lock().unwrap_or_else(|p| p.into_inner());
                    run(&self.shared, job, &mut cache);
                }
            }
            None => {
                let mut cache = self.inline_cache.lock().unwrap_or_else(|p| p.into_inner());
                run(&self.shared, job, &mut cache);
            }
        }
    }

    /// Results ready since the last call.
    pub fn take(&self) -> Vec<Found> {
        std::mem::take(&mut *self.shared.found.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Notified when results are waiting (a permit is kept if nobody
    /// waits), for the loop to select on.
    pub fn waker(&self) -> Arc<Notify> {
        self.shared.wake.clone()
    }
}

fn newest_of_each(jobs: Vec<Job>) -> Vec<Job> {
    let (mut session, mut sessions) = (None, None);
    for job in jobs {
        match job {
            Job::Session { .. } | Job::Warm { .. } => session = Some(job),
            Job::Sessions { .. } => sessions = Some(job),
        }
    }
    session.into_iter().chain(sessions).collect()
}

fn warm(session: &Session, cache: &mut TextCache, cancelled: &dyn Fn() -> bool) {
    for (i, message) in session.messages.iter().enumerate() {
        if i % 64 == 0 && cancelled() {
            return;
        }
        cache.prepare(message);
    }
}

fn post(shared: &Shared, found: Found) {
    shared
        .found
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(found);
    shared.wake.notify_one();
}

fn run(shared: &Shared, job: Job, cache: &mut TextCache) {
    match job {
        Job::Warm {
            generation,
            session,
        } => {
            let cancelled = || shared.latest_session.load(Ordering::SeqCst) != generation;
            warm(&session, cache, &cancelled);
        }
        Job::Session {
            generation,
            session,
            query,
            from,
        } => {
            let cancelled = || shared.latest_session.load(Ordering::SeqCst) != generation;
            let scan = Scan {
                session: &session,
                query: &query,
                cancelled: &cancelled,
            };
            // The first hit the reader will see, then all of them.
            let Some(first) = scan.first_from(from, cache) else {
                return;
            };
            let none = first.is_none();
            post(
                shared,
                Found::First {
                    generation,
                    hit: first,
                },
            );
            let hits = if none {
                Some(Vec::new())
            } else {
                scan.all(cache)
            };
            if let Some(hits) = hits {
                post(shared, Found::Session { generation, hits });
            }
        }
        Job::Sessions {
            generation,
            sessions,
            query,
        } => {
            let mut counts = Vec::new();
            let total = sessions.len();
            let mut told = Instant::now();
            for (i, session) in sessions.iter().enumerate() {
                if shared.latest_sessions.load(Ordering::SeqCst) != generation {
                    return;
                }
                let n = count_in_session(session, &query, cache);
                if n > 0 {
                    counts.push((session.info.id.clone(), n));
                }
                // A long search says how far it got, and what it found so far.
                if told.elapsed() >= PROGRESS_EVERY && i + 1 < total {
                    told = Instant::now();
                    post(
                        shared,
                        Found::Sessions {
                            generation,
                            counts: counts.clone(),
                            searched: i + 1,
                            total,
                        },
                    );
                }
            }
            // Keep the texts of what is still there, drop the rest.
            let live: std::collections::HashSet<&str> = sessions
                .iter()
                .flat_map(|s| s.messages.iter())
                .flat_map(|m| m.parts.iter().map(|p| p.id.as_str()))
                .collect();
            if cache.len() > live.len() * 2 {
                cache.retain(|id| live.contains(id));
            }
            post(
                shared,
                Found::Sessions {
                    generation,
                    counts,
                    searched: total,
                    total,
                },
            );
        }
    }
}
