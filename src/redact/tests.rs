use super::*;

fn redacted(text: &str) -> (String, Tally) {
    let mut tally = Tally::new();
    let out = Redactor::shared().redact(text, &mut tally).into_owned();
    (out, tally)
}

#[test]
fn every_rule_of_gitleaks_compiles() {
    let r = Redactor::shared();
    assert!(r.skipped().is_empty(), "{:?}", r.skipped());
    assert!(r.set.rules.len() > 200, "{}", r.set.rules.len());
}

#[test]
fn a_secret_becomes_its_rules_name() {
    let (out, tally) = redacted("export AWS_ACCESS_KEY_ID=AKIAZ5XKQ7WM3NOPQR4T now");
    assert!(out.contains("[REDACTED:aws-access-token]"), "{out}");
    assert!(!out.contains("AKIAZ5XKQ7WM3NOPQR4T"));
    assert_eq!(tally.get("aws-access-token"), Some(&1));

    let (out, _) = redacted("DATABASE_URL=postgres://app:Sup3rS3cretPw@db.internal:5432/app");
    assert!(!out.contains("Sup3rS3cretPw"), "{out}");
    assert!(out.contains("postgres://app:[REDACTED:"), "{out}");

    let (out, _) = redacted("curl -H 'Authorization: Bearer abcdef0123456789abcdef' x");
    assert!(!out.contains("abcdef0123456789abcdef"), "{out}");
}

#[test]
fn what_is_not_a_secret_stays() {
    for text in [
        "commit 3f2c1a9e8b7d6c5f4e3a2b1c0d9e8f7a6b5c4d3e",
        "id 550e8400-e29b-41d4-a716-446655440000",
        "the api is documented; the key point is speed",
        "let token = get_token(); password_field.clear()",
    ] {
        let (out, tally) = redacted(text);
        assert_eq!(out, text, "{tally:?}");
    }
}

#[test]
fn json_is_redacted_inside_its_strings_and_stays_json() {
    let json = r#"{"output":"key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1c7Zb2xQkY9fN3dQxL0pV7mW\n-----END RSA PRIVATE KEY-----\n","n":1,"t":"AKIAZ5XKQ7WM3NOPQR4T"}"#;
    let mut tally = Tally::new();
    let out = Redactor::shared().redact_json(json, &mut tally);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(!out.contains("MIIEowIBAAKCAQEA"), "{out}");
    assert!(!out.contains("AKIAZ5XKQ7WM3NOPQR4T"), "{out}");
    assert_eq!(v["n"], 1);
    assert!(v["t"].as_str().unwrap().starts_with("[REDACTED:"));
    let clean = r#"{"a":"plain \"text\"","b":[1,2]}"#;
    assert!(matches!(
        Redactor::shared().redact_json(clean, &mut tally),
        Cow::Borrowed(_)
    ));
}

#[test]
#[ignore = "a profile, run by hand"]
fn profile_rules_on_a_large_output() {
    let mut text = String::new();
    let mut n = 0u64;
    while text.len() < 1 << 20 {
        n += 1;
        match n % 9 {
            0 => text.push_str(&format!("let token = get_token(\"w{n}\")?;\n")),
            1 => text.push_str(&format!("api_key: config.w{n}.key,\n")),
            2 => text.push_str(&format!(
                "INFO auth ok for w{n} in 12 ms (access granted)\n"
            )),
            _ => text.push_str("the quick brown fox jumps over the lazy dog again and again\n"),
        }
    }
    let r = Redactor::shared();
    let mut times: Vec<(f64, String)> = Vec::new();
    for rule in &r.set.rules {
        let Some(re) = rule.regex() else { continue };
        if !rule.keywords.iter().any(|k| text.contains(k.as_str())) {
            continue;
        }
        let t = std::time::Instant::now();
        let n = re.captures_iter(text.as_bytes()).count();
        times.push((
            t.elapsed().as_secs_f64() * 1e3,
            format!("{} ({n})", rule.id),
        ));
    }
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ms, id) in times.iter().take(15) {
        eprintln!("{ms:8.1} ms {id}");
    }
    eprintln!("{} rules tried", times.len());
}
