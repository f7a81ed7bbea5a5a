//! The tiny GPT's data: a character vocabulary and the examples cut from plays' texts.
//!
//! A play's text (Project Gutenberg's layout: speeches separated by blank lines, each starting
//! with its speaker's name on a line of its own) is read from its first `ACT I` heading on;
//! act and scene headings are left out. Two ways to cut it into examples, of at most
//! `context + 1` characters each (inputs are all but the last character, targets all but the
//! first):
//! - [`ExampleKind::Lines`]: one example per speech, the speaker's line included, every line
//!   ending in `\n`; a speech too long for one example is cut between its lines, greedily, and
//!   a single line too long is cut every `context + 1` characters. Lengths vary, from a short
//!   name-and-exclamation to a full context: the setting where the token-count rule matters.
//! - [`ExampleKind::Blocks`]: nanoGPT's way, the same text run together and cut every
//!   `context + 1` characters; every example has the same length (a play's last, shorter piece
//!   is dropped).
//!
//! Each play's last tenth of speeches is held out for validation, before any cutting, so the
//! two kinds hold out the same text.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::ConfigError;

/// How the text is cut into examples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ExampleKind {
    /// A speech, or the lines of one, each: variable length, padded in a micro-batch.
    #[default]
    Lines,
    /// Fixed blocks of `context + 1` characters: no padding.
    Blocks,
}

impl ExampleKind {
    pub const ALL: [ExampleKind; 2] = [ExampleKind::Lines, ExampleKind::Blocks];

    /// Its name, also the tiny-GPT scenario's part that cuts the text this way.
    pub fn id(self) -> &'static str {
        match self {
            ExampleKind::Lines => "lines",
            ExampleKind::Blocks => "blocks",
        }
    }

    /// The kind named `id` ([`ExampleKind::id`]).
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.id() == id)
    }
}

/// The characters of the text, sorted: a character's id is its place in the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Vocabulary {
    chars: Vec<char>,
}

impl Vocabulary {
    pub fn of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let set: BTreeSet<char> = texts.into_iter().flat_map(str::chars).collect();
        Self {
            chars: set.into_iter().collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.chars.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    pub fn chars(&self) -> &[char] {
        &self.chars
    }

    /// The id of `c`, if the vocabulary has it.
    pub fn id(&self, c: char) -> Option<u32> {
        self.chars.binary_search(&c).ok().map(|i| i as u32)
    }

    /// The ids of `text`, or the first character the vocabulary lacks.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, char> {
        text.chars().map(|c| self.id(c).ok_or(c)).collect()
    }

    /// The text of `ids`; an id outside the vocabulary reads as U+FFFD.
    pub fn decode(&self, ids: &[u32]) -> String {
        ids.iter()
            .map(|&id| self.chars.get(id as usize).copied().unwrap_or('\u{FFFD}'))
            .collect()
    }
}

/// One named text.
#[derive(Debug, Clone, Copy)]
pub struct Play<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// Train and validation examples as token ids.
#[derive(Debug, Clone, PartialEq)]
pub struct Corpus {
    pub vocabulary: Vocabulary,
    pub kind: ExampleKind,
    pub context: usize,
    pub train: Vec<Vec<u32>>,
    pub validation: Vec<Vec<u32>>,
}

/// A play's last `1 / HELD_OUT` of speeches is held out.
const HELD_OUT: usize = 10;

impl Corpus {
    /// [`Corpus::new`] over `(name, text)` pairs, as a page fetches the plays and a worker
    /// receives them.
    pub fn from_named(plays: &[(String, String)], kind: ExampleKind, context: usize) -> Result<Self, ConfigError> {
        let plays: Vec<Play<'_>> = plays.iter().map(|(name, text)| Play { name, text }).collect();
        Self::new(&plays, kind, context)
    }

    pub fn new(plays: &[Play<'_>], kind: ExampleKind, context: usize) -> Result<Self, ConfigError> {
        if plays.is_empty() {
            return Err(ConfigError::new("text", "no play to train on"));
        }
        let mut train_text = Vec::new();
        let mut validation_text = Vec::new();
        for play in plays {
            let speeches = speeches(play.text);
            if speeches.len() < HELD_OUT {
                return Err(ConfigError::new(
                    "text",
                    format!(
                        "{} has {} speeches after its first \"ACT I\" heading; at least {HELD_OUT} are needed",
                        play.name,
                        speeches.len()
                    ),
                ));
            }
            let split = speeches.len() - speeches.len() / HELD_OUT;
            train_text.push(speeches[..split].to_vec());
            validation_text.push(speeches[split..].to_vec());
        }
        let vocabulary = Vocabulary::of(train_text.iter().chain(&validation_text).flatten().map(String::as_str));
        let cut = |plays: &[Vec<String>]| -> Vec<Vec<u32>> {
            let mut examples = Vec::new();
            for speeches in plays {
                let pieces = match kind {
                    ExampleKind::Lines => speeches.iter().flat_map(|s| cut_speech(s, context + 1)).collect(),
                    ExampleKind::Blocks => cut_blocks(&speeches.concat(), context + 1),
                };
                for piece in pieces {
                    // Every character came from the texts the vocabulary was built from.
                    if let Ok(ids) = vocabulary.encode(&piece) {
                        if ids.len() >= 2 {
                            examples.push(ids);
                        }
                    }
                }
            }
            examples
        };
        let train = cut(&train_text);
        let validation = cut(&validation_text);
        Ok(Self {
            vocabulary,
            kind,
            context,
            train,
            validation,
        })
    }

    /// Characters the model predicts in `examples`: one fewer than each example's length.
    pub fn target_count(examples: &[Vec<u32>]) -> usize {
        examples.iter().map(|e| e.len() - 1).sum()
    }
}

/// A play's speeches from its first `ACT I` heading on, each line ending in `\n` (trailing
/// spaces removed), headings left out.
fn speeches(text: &str) -> Vec<String> {
    let mut lines = text.lines().map(str::trim_end).skip_while(|l| !l.starts_with("ACT I"));
    let mut speeches = Vec::new();
    let mut current = String::new();
    let mut flush = |current: &mut String| {
        // `ACT II.`, `SCENE I. Elsinore.`, and Hamlet's `Scene II.` / `Act III.` alike.
        let first = current.to_ascii_uppercase();
        let heading = first.starts_with("ACT ") || first.starts_with("SCENE ");
        if !current.is_empty() && !heading {
            speeches.push(std::mem::take(current));
        }
        current.clear();
    };
    for line in lines.by_ref() {
        if line.is_empty() {
            flush(&mut current);
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    flush(&mut current);
    speeches
}

/// A speech as examples of at most `limit` characters, cut between lines.
fn cut_speech(speech: &str, limit: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    for line in speech.split_inclusive('\n') {
        let chars: Vec<char> = line.chars().collect();
        if chars.len() > limit {
            if !current.is_empty() {
                pieces.push(std::mem::take(&mut current));
            }
            pieces.extend(chars.chunks(limit).map(|c| c.iter().collect::<String>()));
            continue;
        }
        if current.chars().count() + chars.len() > limit {
            pieces.push(std::mem::take(&mut current));
        }
        current.push_str(line);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// `text` cut every `limit` characters; a last, shorter piece is dropped.
fn cut_blocks(text: &str, limit: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks_exact(limit).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAY: &str = "MACBETH\n\nPersons Represented\n\nDUNCAN, King.\n\nACT I.\n\nSCENE I. An open Place.\n\nScene II. A heath.\n\n\
        FIRST WITCH.\nWhen shall we three meet again\nIn thunder, lightning, or in rain?\n\n\
        SECOND WITCH.\nHail!\n\nTHIRD WITCH.\nAll hail, Macbeth! that shalt be king hereafter!\n\n\
        A.\nOne\n\nB.\nTwo\n\nC.\nThree\n\nD.\nFour\n\nE.\nFive\n\nF.\nSix\n\nG.\nSeven\n";

    #[test]
    fn speeches_start_at_act_one_and_leave_headings_out() {
        let s = speeches(PLAY);
        assert_eq!(
            s[0],
            "FIRST WITCH.\nWhen shall we three meet again\nIn thunder, lightning, or in rain?\n"
        );
        assert_eq!(s[1], "SECOND WITCH.\nHail!\n");
        assert_eq!(s.len(), 10);
        assert!(s
            .iter()
            .all(|s| !s.starts_with("ACT") && !s.starts_with("SCENE") && !s.contains("DUNCAN")));
    }

    #[test]
    fn a_long_speech_is_cut_between_lines_and_a_long_line_every_limit() {
        let pieces = cut_speech("FIRST WITCH.\nWhen shall we three meet again\nIn thunder!\n", 32);
        assert_eq!(
            pieces,
            ["FIRST WITCH.\n", "When shall we three meet again\n", "In thunder!\n"]
        );
        let pieces = cut_speech("abcdefghij\n", 4);
        assert_eq!(pieces, ["abcd", "efgh", "ij\n"]);
        assert!(cut_speech("A.\nB.\n", 8) == ["A.\nB.\n"]);
    }

    #[test]
    fn lines_vary_in_length_and_blocks_do_not_and_both_hold_out_the_same_speeches() {
        let play = Play {
            name: "macbeth",
            text: PLAY,
        };
        let lines = Corpus::new(&[play], ExampleKind::Lines, 40).expect("corpus");
        let blocks = Corpus::new(&[play], ExampleKind::Blocks, 8).expect("corpus");
        let lengths: BTreeSet<usize> = lines.train.iter().map(Vec::len).collect();
        assert!(lengths.len() > 3, "{lengths:?}");
        assert!(lines.train.iter().all(|e| e.len() <= 41 && e.len() >= 2));
        assert!(blocks.train.iter().chain(&blocks.validation).all(|e| e.len() == 9));
        // One speech of ten held out: "G.\nSeven\n".
        assert_eq!(lines.vocabulary.decode(&lines.validation[0]), "G.\nSeven\n");
        assert_eq!(blocks.vocabulary.decode(&blocks.validation.concat()), "G.\nSeven\n");
        let text: String = lines.train.iter().map(|e| lines.vocabulary.decode(e)).collect();
        assert!(text.starts_with("FIRST WITCH.\nWhen shall"));
    }

    #[test]
    fn the_vocabulary_round_trips_and_names_a_character_it_lacks() {
        let v = Vocabulary::of(["hail\n", "Macbeth"]);
        let ids = v.encode("hail Macbeth").map_err(|c| c.to_string());
        assert_eq!(ids, Err(" ".to_string()));
        let ids = v.encode("Macbeth\nhail").expect("known characters");
        assert_eq!(v.decode(&ids), "Macbeth\nhail");
        assert_eq!(v.chars()[0], '\n');
    }

    #[test]
    fn a_play_without_enough_speeches_is_refused_with_its_name() {
        let error = Corpus::new(
            &[Play {
                name: "fragment",
                text: "ACT I.\n\nA.\nHi\n",
            }],
            ExampleKind::Lines,
            16,
        )
        .expect_err("too short");
        assert!(error.message.contains("fragment"), "{error}");
    }
}
