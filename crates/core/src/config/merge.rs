//! Configuration layers merged as data: each layer is a TOML table, a later table's keys win, and
//! tables merge key by key at every depth (`[providers.ds]` of the project adds to the user's
//! `[providers.ds]`; its `headers` add to the user's). Any other value (a string, a number, an
//! array such as `shell_env.keep`) replaces the earlier one whole.

use toml::{Table, Value};

/// Merges `later` into `base` (see the module docs).
pub fn merge(base: &mut Table, later: Table) {
    for (key, value) in later {
        match (base.get_mut(&key), value) {
            (Some(Value::Table(earlier)), Value::Table(value)) => merge(earlier, value),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        text.parse().unwrap_or_default()
    }

    #[test]
    fn tables_merge_at_every_depth_and_other_values_are_replaced() {
        let mut base = table("a = 1\nkeep = [\"X\"]\n[p.ds]\nurl = \"u\"\n[p.ds.headers]\nh1 = \"1\"\n");
        merge(&mut base, table("keep = [\"Y\"]\n[p.ds]\nmodel = \"m\"\n[p.ds.headers]\nh2 = \"2\"\n"));
        assert_eq!(
            base,
            table(
                "a = 1\nkeep = [\"Y\"]\n[p.ds]\nurl = \"u\"\nmodel = \"m\"\n[p.ds.headers]\nh1 = \"1\"\nh2 = \"2\"\n"
            )
        );
    }
}
