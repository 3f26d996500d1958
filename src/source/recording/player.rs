//! Playing a recording into the app: a reader thread decodes records (off
//! the UI thread), and a pacer task releases them at the recorded pace,
//! scaled by a speed and with idle gaps capped. The app receives the same
//! messages a live source sends.

use std::io::BufRead;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::source::recording::replay::ReplayReader;
use crate::source::timeline::playback::GapCappedTime;

use crate::source::msg::{SourceMsg, SourceState};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    /// 1.0 plays in real time, 2.0 twice as fast; `None`: no waiting at all.
    pub speed: Option<f64>,
    /// The longest wait between two records, before scaling.
    pub max_gap: Duration,
}

impl Pace {
    pub const INSTANT: Pace = Pace {
        speed: None,
        max_gap: Duration::ZERO,
    };
}

/// Start playing `input` into `tx`.
pub fn spawn<R: BufRead + Send + 'static>(input: R, pace: Pace, tx: mpsc::Sender<SourceMsg>) {
    let (raw_tx, raw_rx) = mpsc::channel::<SourceMsg>(4096);
    let reader_tx = if pace.speed.is_some() {
        raw_tx
    } else {
        tx.clone()
    };
    std::thread::Builder::new()
        .name("ocview-replay-reader".into())
        .spawn(move || read_all(input, reader_tx))
        .expect("spawn the replay reader thread");
    if pace.speed.is_some() {
        tokio::spawn(pace_records(raw_rx, pace, tx));
    }
}

fn read_all<R: BufRead>(input: R, tx: mpsc::Sender<SourceMsg>) {
    let mut reader = ReplayReader::new(input);
    let _ = tx.blocking_send(SourceMsg::State(SourceState::Playing));
    let mut told = None;
    loop {
        let next = reader.next_record();
        // The form, as soon as it is known (and again when a first record
        // refines it), so a bad record is reported with it.
        if let Some(form) = reader.format()
            && told != Some(form)
        {
            told = Some(form);
            let lines = reader.lines_read();
            if tx.blocking_send(SourceMsg::Form { form, lines }).is_err() {
                return;
            }
        }
        match next {
            Ok(Some(record)) => {
                if tx
                    .blocking_send(SourceMsg::Record(Box::new(record)))
                    .is_err()
                {
                    return; // the app is gone
                }
            }
            Ok(None) => break,
            Err(e) => {
                let _ = tx.blocking_send(SourceMsg::State(SourceState::Failed(format!(
                    "read error: {e}"
                ))));
                return;
            }
        }
    }
    if let Some(form) = reader.format() {
        let lines = reader.lines_read();
        let _ = tx.blocking_send(SourceMsg::Form { form, lines });
    }
    let _ = tx.blocking_send(SourceMsg::State(SourceState::Ended));
}

/// Release records at their recorded times. Records without a time pass
/// at once; a time going backwards (concatenated recordings) waits nothing.
async fn pace_records(mut rx: mpsc::Receiver<SourceMsg>, pace: Pace, tx: mpsc::Sender<SourceMsg>) {
    let speed = pace.speed.unwrap_or(1.0).max(1e-3);
    let start = Instant::now();
    let mut play_time = GapCappedTime::new(pace.max_gap);
    while let Some(msg) = rx.recv().await {
        if let SourceMsg::Record(r) = &msg
            && let Some(t) = r.time()
        {
            let virtual_ms = play_time.at(t) as f64;
            let due = start + Duration::from_secs_f64(virtual_ms / speed / 1000.0);
            tokio::time::sleep_until(due).await;
        }
        if tx.send(msg).await.is_err() {
            return;
        }
    }
}
