//! A fresh, empty archive of one engine at each call, for the suites run
//! on both: SQLite files in a temporary folder, databases of one real
//! PostgreSQL (the including test names it `postgres_support`).

use ocview::archive::Setting;

pub trait Fresh {
    fn fresh(&mut self) -> Setting;
}

/// SQLite: a new file each time, under the folder.
pub struct Files(pub tempfile::TempDir, pub u32);

impl Fresh for Files {
    fn fresh(&mut self) -> Setting {
        self.1 += 1;
        Setting::Sqlite(self.0.path().join(format!("a{}/archive.db", self.1)))
    }
}

/// PostgreSQL: a new database each time, on the one server.
pub struct Server(pub super::postgres::Postgres, pub u32);

impl Fresh for Server {
    fn fresh(&mut self) -> Setting {
        self.1 += 1;
        Setting::Postgres(self.0.database(&format!("a{}", self.1)))
    }
}

/// The ids of the sessions an archive holds, sorted.
#[allow(dead_code)]
pub fn session_ids(archive: &mut dyn ocview::archive::Engine) -> Vec<String> {
    let mut ids: Vec<String> = archive
        .oldest_sessions(None, 1000)
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    ids.sort();
    ids
}
