//! Saved data that could not be read (quiz progress, a stored certificate, SCORM suspend data)
//! is kept aside in a bounded list under its own key instead of being overwritten, so a second
//! corruption never destroys what the first one preserved.

use serde::{Deserialize, Serialize};

/// How many unreadable saves one key keeps: the first (most likely the learner's real progress)
/// and the newest after it.
pub const MAX_KEPT: usize = 5;
/// Longer data is kept truncated to this many characters, so a huge corrupt value cannot fill
/// the browser's storage quota.
pub const MAX_KEPT_CHARS: usize = 64 * 1024;

/// One unreadable save and when it was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptSave {
    /// Milliseconds since the Unix epoch; absent for data kept by versions that recorded none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_at_ms: Option<f64>,
    pub data: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// The key under which the unreadable saves of `key` are kept.
pub fn backup_key(key: &str) -> String {
    format!("{key}.unreadable")
}

/// The kept list with `data` added, as the JSON to store under [`backup_key`]. `existing` is what
/// that key holds now: a list written here, or (from older versions) one raw save, which is kept
/// as the first entry. Data already kept is not added twice (a reload finds the same
/// corruption again); when the list is full the oldest entry after the first is dropped.
pub fn keep(existing: Option<&str>, data: &str, found_at_ms: f64) -> String {
    let mut kept: Vec<KeptSave> = match existing {
        None => Vec::new(),
        Some(text) => serde_json::from_str(text).unwrap_or_else(|_| vec![entry(text, None)]),
    };
    let new = entry(data, Some(found_at_ms));
    if !kept.iter().any(|k| k.data == new.data) {
        if kept.len() >= MAX_KEPT {
            kept.remove(1.min(kept.len() - 1));
        }
        kept.push(new);
    }
    serde_json::to_string(&kept).unwrap_or_default()
}

/// The entries of a kept list (empty when the text is not one).
pub fn kept(text: &str) -> Vec<KeptSave> {
    serde_json::from_str(text).unwrap_or_default()
}

fn entry(data: &str, found_at_ms: Option<f64>) -> KeptSave {
    let truncated = data.chars().count() > MAX_KEPT_CHARS;
    let data = if truncated {
        data.chars().take(MAX_KEPT_CHARS).collect()
    } else {
        data.to_string()
    };
    KeptSave {
        found_at_ms,
        data,
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_corruption_never_replaces_the_first() {
        let first = keep(None, "real progress, damaged", 1.0);
        let second = keep(Some(&first), "{broken", 2.0);
        let list = kept(&second);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].data, "real progress, damaged");
        assert_eq!(list[0].found_at_ms, Some(1.0));
        assert_eq!(list[1].data, "{broken");
        assert_eq!(list[1].found_at_ms, Some(2.0));
    }

    #[test]
    fn the_same_data_found_again_is_kept_once() {
        let once = keep(None, "x", 1.0);
        assert_eq!(kept(&keep(Some(&once), "x", 5.0)).len(), 1);
    }

    #[test]
    fn a_raw_save_kept_by_an_older_version_stays_first() {
        let list = kept(&keep(Some("{\"old\":"), "new", 3.0));
        assert_eq!(list[0].data, "{\"old\":");
        assert_eq!(list[0].found_at_ms, None);
        assert_eq!(list[1].data, "new");
    }

    #[test]
    fn the_list_is_bounded_and_keeps_the_first_and_the_newest() {
        let mut text: Option<String> = None;
        for i in 0..20 {
            text = Some(keep(text.as_deref(), &format!("save {i}"), f64::from(i)));
        }
        let list = kept(&text.unwrap());
        let data: Vec<&str> = list.iter().map(|k| k.data.as_str()).collect();
        assert_eq!(data, ["save 0", "save 16", "save 17", "save 18", "save 19"]);
    }

    #[test]
    fn huge_data_is_kept_truncated_and_marked() {
        let huge = "é".repeat(MAX_KEPT_CHARS + 10);
        let list = kept(&keep(None, &huge, 1.0));
        assert!(list[0].truncated);
        assert_eq!(list[0].data.chars().count(), MAX_KEPT_CHARS);
        assert!(!kept(&keep(None, "small", 1.0))[0].truncated);
    }
}
