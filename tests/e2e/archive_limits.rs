//! The archive's limits, run against both engines by the archive suite:
//! an age limit prunes old sessions whole (their index rows too), a size
//! cap the oldest first.

use crate::archive::{Fresh, every_fixture_file, found, import, open, write_two_sessions};

use ocview::archive::{Limits, Query, prune};

const DAY: i64 = 24 * 3600 * 1000;

pub(crate) fn the_age_limit_prunes_old_sessions_whole(engines: &mut dyn Fresh) {
    let mut archive = open(&engines.fresh());
    write_two_sessions(&mut *archive);
    let before = archive.counts().unwrap();
    // ses_alpha was last updated 125 days before now, ses_beta 10.
    let now = 1_710_000_000_000 + 10 * DAY;
    let limits = Limits {
        max_bytes: None,
        max_age_days: Some(60),
    };
    // A dry run names what would go, and takes nothing.
    let plan = prune::dry_run(&mut *archive, &limits, now).unwrap();
    assert_eq!(
        (plan.by_age, plan.by_size.len()),
        (vec!["ses_alpha".to_string()], 0)
    );
    assert_eq!(archive.counts().unwrap(), before);
    let pruned = prune::prune(&mut *archive, &limits, now).unwrap();
    assert_eq!(pruned.by_age, vec!["ses_alpha".to_string()]);
    assert_eq!(
        pruned.summary(&limits).unwrap(),
        "pruned 1 oldest session (older than 60 days)"
    );
    let after = archive.counts().unwrap();
    assert_eq!(after.sessions, 1, "{after:?}");
    assert_eq!(after.messages, before.messages - 1, "{after:?}");
    assert_eq!(after.parts, before.parts - 2, "{after:?}");
    assert!(archive.events("ses_alpha").unwrap().is_empty());
    assert!(archive.snapshot("ses_alpha").unwrap().is_empty());
    assert!(!archive.events("ses_beta").unwrap().is_empty());
    // Its index rows went too: the title and every part.
    assert_eq!(
        found(&mut *archive, &Query::new("invoice")),
        ["ses_beta/prt_b2", "ses_beta/prt_b1"]
    );
    assert!(found(&mut *archive, &Query::new("billing")).is_empty());
    // Within the limit now: a second run takes nothing.
    assert_eq!(
        prune::prune(&mut *archive, &limits, now)
            .unwrap()
            .sessions(),
        0
    );
}

pub(crate) fn the_size_cap_prunes_the_oldest_sessions(engines: &mut dyn Fresh) {
    let mut archive = open(&engines.fresh());
    for f in every_fixture_file() {
        import(&mut *archive, &f);
    }
    let all = archive.oldest_sessions(None, 10_000).unwrap();
    let size = archive.size().unwrap();
    assert!(
        all.len() >= 9 && size > 0,
        "{} sessions, {size} bytes",
        all.len()
    );
    let cap = size / 2;
    let limits = Limits {
        max_bytes: Some(cap),
        max_age_days: None,
    };
    // Near the cap it is said before anything goes; well under, not.
    let said = prune::nearly_full(size, &limits).unwrap();
    assert!(said.contains("cap") && said.contains("--dry-run"), "{said}");
    let roomy = Limits {
        max_bytes: Some(size * 2),
        max_age_days: None,
    };
    assert_eq!(prune::nearly_full(size, &roomy), None);
    // A dry run names the oldest sessions the cap would take, and takes
    // nothing.
    let plan = prune::dry_run(&mut *archive, &limits, 0).unwrap();
    assert!(
        !plan.by_size.is_empty() && plan.by_age.is_empty(),
        "{plan:?}"
    );
    let oldest: Vec<&String> = all[..plan.by_size.len()].iter().map(|s| &s.0).collect();
    assert_eq!(plan.by_size.iter().collect::<Vec<_>>(), oldest);
    assert_eq!(archive.size().unwrap(), size);
    let pruned = prune::prune(&mut *archive, &limits, 0).unwrap();
    assert!(
        !pruned.by_size.is_empty() && pruned.by_age.is_empty(),
        "{pruned:?}"
    );
    assert_eq!(pruned.bytes_before, size);
    let now = archive.size().unwrap();
    assert!(now <= cap, "{now} bytes held, cap {cap}");
    assert_eq!(pruned.bytes_after, now);
    let kept = archive.oldest_sessions(None, 10_000).unwrap();
    assert!(!kept.is_empty());
    assert_eq!(kept.len() + pruned.by_size.len(), all.len());
    // The oldest went, in order: what is kept is the newest part of the list.
    assert_eq!(kept.as_slice(), &all[all.len() - kept.len()..]);
    let pruned_ids: Vec<&String> = all[..pruned.by_size.len()].iter().map(|s| &s.0).collect();
    assert_eq!(pruned_ids, pruned.by_size.iter().collect::<Vec<_>>());
    for id in &pruned.by_size {
        assert!(archive.events(id).unwrap().is_empty(), "{id} kept events");
    }
    assert!(
        pruned
            .summary(&limits)
            .unwrap()
            .contains("oldest sessions (size cap "),
        "{:?}",
        pruned.summary(&limits)
    );
    // A cap below one session keeps the newest.
    let tiny = Limits {
        max_bytes: Some(1),
        max_age_days: None,
    };
    prune::prune(&mut *archive, &tiny, 0).unwrap();
    assert_eq!(
        archive.oldest_sessions(None, 10).unwrap(),
        vec![all.last().unwrap().clone()]
    );
    archive.vacuum().unwrap();
    assert_eq!(archive.counts().unwrap().sessions, 1);
}
