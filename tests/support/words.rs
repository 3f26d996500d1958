//! Made-up words for texts whose index must be large: the same for a seed
//! on every machine.

/// A generator of words `w<hex>`, each below `kinds` (xorshift from `seed`).
pub fn random_words(seed: u64, kinds: u64) -> impl FnMut() -> String {
    let mut seed = seed;
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        format!("w{:x}", seed % kinds)
    }
}
