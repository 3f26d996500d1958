//! A session with secrets planted where an agent's sessions hold them (the
//! title, the user's and the assistant's text, a bash command and its
//! output, a file read, a file written), of many kinds; and the same
//! session with none, but with what looks like one (git SHAs, UUIDs,
//! base64 images, lock files' hashes). Every value is made here from a
//! fixed seed: no real secret is in the repository.
#![allow(dead_code)]

/// One secret planted: its kind and its value.
pub struct Planted {
    pub kind: &'static str,
    pub value: String,
}

pub const SESSION: &str = "ses_secretsPLANTEDxxxxxxxxx";

/// A fixed generator (xorshift), so the values are the same every run.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn of(&mut self, charset: &str, n: usize) -> String {
        let cs: Vec<char> = charset.chars().collect();
        (0..n)
            .map(|_| cs[(self.next() % cs.len() as u64) as usize])
            .collect()
    }
}

const UPPER32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const LOWER_ALNUM: &str = "abcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &str = "0123456789abcdef";
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The secrets: 36 of 19 kinds.
pub fn planted() -> Vec<Planted> {
    let mut g = Gen(0x5eed_1234_abcd_0042);
    let mut out = Vec::new();
    let mut add = |kind: &'static str, value: String| out.push(Planted { kind, value });
    for _ in 0..2 {
        add("aws access key", format!("AKIA{}", g.of(UPPER32, 16)));
        add("github token", format!("ghp_{}", g.of(ALNUM, 36)));
        add("gitlab token", format!("glpat-{}", g.of(ALNUM, 20)));
        add(
            "openai key",
            format!("sk-{}T3BlbkFJ{}", g.of(ALNUM, 20), g.of(ALNUM, 20)),
        );
        add(
            "anthropic key",
            format!("sk-ant-api03-{}AA", g.of(ALNUM, 93)),
        );
        add(
            "slack bot token",
            format!(
                "xoxb-{}-{}-{}",
                g.of("0123456789", 12),
                g.of("0123456789", 12),
                g.of(ALNUM, 24)
            ),
        );
        add("stripe key", format!("sk_live_{}", g.of(ALNUM, 24)));
        add(
            "jwt",
            format!(
                "eyJ{}.eyJ{}.{}",
                g.of(ALNUM, 30),
                g.of(ALNUM, 40),
                g.of(ALNUM, 43)
            ),
        );
        add("google api key", format!("AIza{}", g.of(ALNUM, 35)));
        add("postgres url password", format!("Pw{}", g.of(ALNUM, 14)));
        add("generic password", format!("{}x9!Q", g.of(ALNUM, 16)));
        add("bearer token", g.of(ALNUM, 32));
    }
    add(
        "github fine-grained token",
        format!("github_pat_{}", g.of(ALNUM, 82)),
    );
    add("npm token", format!("npm_{}", g.of(LOWER_ALNUM, 36)));
    add("huggingface token", format!("hf_{}", g.of(LETTERS, 34)));
    add("digitalocean token", format!("dop_v1_{}", g.of(HEX, 64)));
    add(
        "slack webhook",
        format!(
            "T{}/B{}/{}",
            g.of(UPPER32, 10),
            g.of(UPPER32, 10),
            g.of(ALNUM, 24)
        ),
    );
    add(
        "sendgrid key",
        format!("SG.{}.{}", g.of(ALNUM, 22), g.of(ALNUM, 43)),
    );
    add("private key", g.of(ALNUM, 64));
    add("private key", g.of(ALNUM, 64));
    add("mysql url password", format!("My{}", g.of(ALNUM, 14)));
    add("mongodb url password", format!("Mo{}", g.of(ALNUM, 14)));
    out
}

/// A secret as it stands in text: a line that holds it.
fn in_context(p: &Planted) -> String {
    let v = &p.value;
    match p.kind {
        "aws access key" => format!("export AWS_ACCESS_KEY_ID={v}"),
        "github token" | "github fine-grained token" => format!("GITHUB_TOKEN={v} gh pr list"),
        "gitlab token" => format!("git clone https://oauth2:{v}@gitlab.com/acme/app.git"),
        "openai key" | "anthropic key" => format!("the key is {v} in .env"),
        "slack bot token" => format!("SLACK_BOT_TOKEN={v}"),
        "stripe key" => format!("stripe.api_key = \"{v}\""),
        "jwt" => format!("cookie: session={v}"),
        "google api key" => format!("maps.googleapis.com/api?key={v}"),
        "postgres url password" => format!("DATABASE_URL=postgres://app:{v}@db.internal:5432/app"),
        "mysql url password" => format!("mysql://root:{v}@127.0.0.1:3306/shop"),
        "mongodb url password" => format!("mongodb+srv://admin:{v}@cluster0.example.net/test"),
        "generic password" => format!("password = \"{v}\""),
        "bearer token" => format!("curl -H \"Authorization: Bearer {v}\" https://api.acme.io/v1"),
        "npm token" => format!("//registry.npmjs.org/:_authToken={v}"),
        "huggingface token" => format!("HF_TOKEN={v} python train.py"),
        "digitalocean token" => format!("doctl auth init -t {v}"),
        "slack webhook" => format!("https://hooks.slack.com/services/{v}"),
        "sendgrid key" => format!("SENDGRID_API_KEY={v}"),
        "private key" => format!(
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n{v}\n-----END RSA PRIVATE KEY-----"
        ),
        other => panic!("no context for {other}"),
    }
}

/// What looks like a secret but is not: 36 lines of it, some beside the
/// words secret rules look for.
pub fn lookalikes() -> Vec<String> {
    let mut g = Gen(0xc1ea_4bad_f00d_0007);
    let mut out: Vec<String> = [
        "api_version = \"2024-06-01\"",
        "token_count: 12345",
        "primary_key = \"id\"",
        "sort key: created_at_desc",
        "password_hash_algorithm = \"argon2id\"",
        "secret_name = \"prod-db-credentials\"",
        "auth: OAuthProvider::default()",
        "access_level = \"read-only\"",
        "let key = format!(\"{prefix}:{id}\");",
        "TOKEN_URL=https://oauth2.googleapis.com/token",
        "the keyboard layout and the monkey wrench",
        "credentials: Credentials::from_env()?,",
        "password: process.env.DB_PASSWORD,",
        "apiKey: config.get(\"apiKey\"),",
        "secret = os.environ[\"APP_SECRET\"]",
        "Authorization: Bearer ${TOKEN}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for _ in 0..4 {
        out.push(format!("commit {}", g.of(HEX, 40)));
        out.push(format!(
            "request id {}-{}-4{}-a{}-{}",
            g.of(HEX, 8),
            g.of(HEX, 4),
            g.of(HEX, 3),
            g.of(HEX, 3),
            g.of(HEX, 12)
        ));
        out.push(format!("\"integrity\": \"sha512-{}==\"", g.of(ALNUM, 86)));
        out.push(format!("checksum = \"{}\"", g.of(HEX, 64)));
        out.push(format!(
            "![logo](data:image/png;base64,iVBORw0KGgo{}=)",
            g.of(ALNUM, 120)
        ));
    }
    out
}

/// A session (as a recording's bus events) with `lines` spread over its
/// title, user text, assistant text, a bash call (command and output), a
/// file read and a file written.
pub fn session(lines: &[String]) -> String {
    let n = lines.len();
    let chunk = |i: usize, of: usize| -> String {
        let from = n * i / of;
        let to = n * (i + 1) / of;
        lines[from..to].join("\n")
    };
    let places = 6;
    let title = serde_json::to_string(&format!("deploy notes {}", chunk(0, places))).unwrap();
    let user = serde_json::to_string(&chunk(1, places)).unwrap();
    let assistant = serde_json::to_string(&chunk(2, places)).unwrap();
    let command = serde_json::to_string(&chunk(3, places)).unwrap();
    let read = serde_json::to_string(&chunk(4, places)).unwrap();
    let written = serde_json::to_string(&chunk(5, places)).unwrap();
    let s = SESSION;
    let mut ev = vec![
        format!(
            r#"{{"type":"session.updated","properties":{{"info":{{"id":"{s}","title":{title},"directory":"/work/app","time":{{"created":1795339000000,"updated":1795339100000}}}}}}}}"#
        ),
        format!(
            r#"{{"type":"message.updated","properties":{{"info":{{"id":"msg_sec1","sessionID":"{s}","role":"user","time":{{"created":1795339001000}}}}}}}}"#
        ),
        format!(
            r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_sec1","messageID":"msg_sec1","sessionID":"{s}","type":"text","text":{user}}}}}}}"#
        ),
        format!(
            r#"{{"type":"message.updated","properties":{{"info":{{"id":"msg_sec2","sessionID":"{s}","role":"assistant","providerID":"anthropic","modelID":"claude-x","time":{{"created":1795339002000,"completed":1795339009000}}}}}}}}"#
        ),
    ];
    // The assistant's text streams in pieces, as it does live.
    ev.push(format!(r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_sec2","messageID":"msg_sec2","sessionID":"{s}","type":"text","text":""}}}}}}"#));
    let text: String = serde_json::from_str(&assistant).unwrap();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(7) {
        let delta = serde_json::to_string(&piece.iter().collect::<String>()).unwrap();
        ev.push(format!(r#"{{"type":"message.part.delta","properties":{{"sessionID":"{s}","messageID":"msg_sec2","partID":"prt_sec2","field":"text","delta":{delta}}}}}"#));
    }
    ev.push(format!(r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_sec2","messageID":"msg_sec2","sessionID":"{s}","type":"text","text":{assistant}}}}}}}"#));
    ev.push(format!(r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_sec3","messageID":"msg_sec2","sessionID":"{s}","type":"tool","tool":"bash","callID":"call_1","state":{{"status":"completed","input":{{"command":{command},"description":"run it"}},"output":{command},"title":"run it","metadata":{{}},"time":{{"start":1795339003000,"end":1795339004000}}}}}}}}}}"#));
    ev.push(format!(r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_sec4","messageID":"msg_sec2","sessionID":"{s}","type":"tool","tool":"read","callID":"call_2","state":{{"status":"completed","input":{{"filePath":"/work/app/.env"}},"output":{read},"title":".env","metadata":{{}},"time":{{"start":1795339005000,"end":1795339006000}}}}}}}}}}"#));
    ev.push(format!(r#"{{"type":"message.part.updated","properties":{{"part":{{"id":"prt_sec5","messageID":"msg_sec2","sessionID":"{s}","type":"tool","tool":"write","callID":"call_3","state":{{"status":"completed","input":{{"filePath":"/work/app/config.yml","content":{written}}},"output":"wrote it","title":"config.yml","metadata":{{}},"time":{{"start":1795339007000,"end":1795339008000}}}}}}}}}}"#));
    ev.push(format!(
        r#"{{"type":"session.idle","properties":{{"sessionID":"{s}"}}}}"#
    ));
    let mut out = ev.join("\n");
    out.push('\n');
    out
}

/// The session with every planted secret in it.
pub fn with_secrets() -> (String, Vec<Planted>) {
    let planted = planted();
    let lines: Vec<String> = planted.iter().map(in_context).collect();
    (session(&lines), planted)
}

/// The same session with only look-alikes: the lines and the recording.
pub fn without_secrets() -> (Vec<String>, String) {
    let lines = lookalikes();
    let rec = session(&lines);
    (lines, rec)
}
