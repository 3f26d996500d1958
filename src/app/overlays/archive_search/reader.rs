//! The archive's reader: a thread of its own that opens the archive on
//! first use and answers queries, the newest only when several wait (a
//! query per key typed), so the loop never waits on a database.

use std::sync::mpsc::{Receiver, Sender};

use super::Reply;
use crate::archive::{Engine, Hit, Query, Setting};

enum Request {
    Search(u64, Query),
    Open(Hit),
}

pub struct Reader {
    tx: Sender<Request>,
}

impl Reader {
    pub fn spawn(setting: Setting, answer: Box<dyn Fn(Reply) + Send>) -> Reader {
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("archive-reader".into())
            .spawn(move || run(&setting, &rx, &*answer));
        if let Err(e) = spawned {
            tracing::warn!("archive: no reader thread: {e}");
        }
        Reader { tx }
    }

    pub fn search(&self, generation: u64, query: Query) {
        let _ = self.tx.send(Request::Search(generation, query));
    }

    pub fn open(&self, hit: Hit) {
        let _ = self.tx.send(Request::Open(hit));
    }
}

fn run(setting: &Setting, rx: &Receiver<Request>, answer: &dyn Fn(Reply)) {
    let mut engine: Option<Box<dyn Engine>> = None;
    while let Ok(mut request) = rx.recv() {
        // Only the last of the queries typed meanwhile matters.
        while let Ok(next) = rx.try_recv() {
            match (&request, next) {
                (Request::Open(_), next @ Request::Search(..)) => {
                    serve(setting, &mut engine, request, answer);
                    request = next;
                }
                (_, next) => request = next,
            }
        }
        serve(setting, &mut engine, request, answer);
    }
}

fn serve(
    setting: &Setting,
    engine: &mut Option<Box<dyn Engine>>,
    request: Request,
    answer: &dyn Fn(Reply),
) {
    if engine.is_none() {
        match setting.open() {
            Ok(opened) => *engine = opened,
            Err(e) => {
                let why = e.to_string();
                answer(match request {
                    Request::Search(generation, _) => Reply::Found {
                        generation,
                        result: Err(why),
                    },
                    Request::Open(hit) => Reply::Opened {
                        hit: Box::new(hit),
                        result: Err(why),
                    },
                });
                return;
            }
        }
    }
    let Some(archive) = engine.as_mut() else {
        return;
    };
    match request {
        Request::Search(generation, query) => answer(Reply::Found {
            generation,
            result: archive.find(&query).map_err(|e| e.to_string()),
        }),
        Request::Open(hit) => {
            let result = archive.snapshot(&hit.session_id).map_err(|e| e.to_string());
            answer(Reply::Opened {
                hit: Box::new(hit),
                result,
            });
        }
    }
}
