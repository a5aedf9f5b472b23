//! How recall cuts words to a common stem, shared by the index ([`super::recall`]) and the
//! topic table ([`super::topics`]).

/// A light stem, the same for singular and plural: `dependencies`/`dependency` → `dependenc`,
/// `packages`/`package` → `packag`, `boxes`/`box` → `box`, `renamed`/`rename` → `renam`,
/// `building`/`build` → `build`; a stem keeps at least 3 characters.
pub(crate) fn stem(word: &str) -> &str {
    if !word.is_ascii() {
        return word;
    }
    let long = |base: &&str| base.len() >= 3;
    if let Some(base) = word.strip_suffix("ies").filter(long) {
        return base;
    }
    let base = if let Some(base) = word.strip_suffix("es").filter(|base| {
        long(base) && (base.ends_with(['s', 'x', 'z']) || base.ends_with("ch") || base.ends_with("sh"))
    }) {
        base
    } else if let Some(base) = word.strip_suffix('s').filter(|base| long(base) && !base.ends_with('s')) {
        base
    } else if let Some(base) = word.strip_suffix("ing").filter(long) {
        base
    } else if let Some(base) = word.strip_suffix("ed").filter(long) {
        base
    } else {
        word
    };
    base.strip_suffix(['e', 'y']).filter(long).unwrap_or(base)
}
