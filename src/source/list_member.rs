//! The loop of a list member read on a thread of its own (opencode's
//! database, the archive): the first look at once, then pages in the
//! background while nothing else waits, the app's requests as they come,
//! and a look for what changed every so often. The two members differ in
//! what a look, a page and a request do, never in when they happen.

use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

/// What a member does; `run` decides when.
pub trait ListMember {
    /// What the app (or a listener) sends the member.
    type Input;
    /// The app is gone, or the member is off: the loop ends.
    fn closed(&self) -> bool;
    /// Pages are left to send: one is read whenever no input waits.
    fn listing(&self) -> bool;
    /// How long from one look to the next.
    fn every(&self) -> Duration;
    /// Open if need be, and send what changed since the last look (the
    /// first look sends the first page).
    fn look(&mut self);
    /// Send the next page of the background listing.
    fn list_more(&mut self);
    /// Do what an input asks.
    fn input(&mut self, input: Self::Input);
}

/// Run `member` until it is closed or every sender of `inputs` is gone.
/// A waiting input always goes first; no page is read while one waits.
pub fn run<M: ListMember>(member: &mut M, inputs: &Receiver<M::Input>) {
    let mut last_look = Instant::now();
    member.look();
    while !member.closed() {
        let listing = member.listing();
        let every = member.every();
        let wait = if listing {
            Duration::ZERO
        } else {
            every.saturating_sub(last_look.elapsed())
        };
        let input = if wait.is_zero() {
            match inputs.try_recv() {
                Ok(i) => Some(i),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => return,
            }
        } else {
            match inputs.recv_timeout(wait) {
                Ok(i) => Some(i),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        };
        match input {
            Some(input) => member.input(input),
            None if listing => member.list_more(),
            None => {}
        }
        if last_look.elapsed() >= every {
            last_look = Instant::now();
            member.look();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;

    use super::*;

    /// Counts what the loop asked of it; lists `pages` pages, then stops
    /// once it has seen `stop_after` inputs.
    #[derive(Default)]
    struct Member {
        pages: usize,
        looks: usize,
        listed: usize,
        inputs: Vec<u32>,
        order: Vec<&'static str>,
        stop_after: usize,
        /// Told when the last page is listed.
        listed_all: Option<std::sync::mpsc::Sender<()>>,
    }

    impl ListMember for Member {
        type Input = u32;
        fn closed(&self) -> bool {
            self.inputs.len() >= self.stop_after
        }
        fn listing(&self) -> bool {
            self.listed < self.pages
        }
        fn every(&self) -> Duration {
            Duration::from_secs(3600)
        }
        fn look(&mut self) {
            self.looks += 1;
            self.order.push("look");
        }
        fn list_more(&mut self) {
            self.listed += 1;
            self.order.push("page");
            if self.listed == self.pages
                && let Some(tell) = &self.listed_all
            {
                let _ = tell.send(());
            }
        }
        fn input(&mut self, input: u32) {
            self.inputs.push(input);
            self.order.push("input");
        }
    }

    #[test]
    fn inputs_waiting_go_before_pages_and_the_first_look_before_all() {
        let (tx, rx) = channel();
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        let mut m = Member {
            pages: 3,
            stop_after: 2,
            ..Member::default()
        };
        run(&mut m, &rx);
        assert_eq!(m.order, ["look", "input", "input"]);

        // Pages go on while nothing waits; the loop ends with the senders.
        let (tx, rx) = channel::<u32>();
        let mut m = Member {
            pages: 3,
            stop_after: 1,
            ..Member::default()
        };
        drop(tx);
        run(&mut m, &rx);
        assert_eq!(m.order, ["look"]);
        let (tx, rx) = channel::<u32>();
        let (tell, listed_all) = channel();
        let worker = std::thread::spawn(move || {
            let mut m = Member {
                pages: 3,
                stop_after: 1,
                listed_all: Some(tell),
                ..Member::default()
            };
            run(&mut m, &rx);
            m
        });
        listed_all.recv().unwrap();
        tx.send(7).unwrap();
        let m = worker.join().unwrap();
        assert_eq!(m.order, ["look", "page", "page", "page", "input"]);
        assert_eq!(m.looks, 1, "no look before its time");
    }
}
