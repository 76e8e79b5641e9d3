//! [`History`]: a conversation's messages, shared by every holder and
//! grown by appending, so that a holder of an earlier length (a turn's
//! clone of the context, a render's result) never makes an append copy
//! the conversation.
//!
//! The messages are a base set whole (an `Arc<Vec<_>>`, taken as it is)
//! and then chunks of [`CHUNK`] slots that appends fill. A slot is written
//! once and never changed, and a history sees only the slots below its
//! length, so an append writes the next slot in place even while older
//! clones share the chunk: they do not see it. Only a second append at the
//! same place (two clones of one history that each append: a branch)
//! finds the slot taken; that branch copies the part of the chunk it sees
//! (fewer than [`CHUNK`] messages) and the chunk pointers before it, once,
//! and owns them from then on. The chunk pointers are kept the same way,
//! in a list that doubles when full.

use std::fmt;
use std::iter::FusedIterator;
use std::ops::Index;
use std::slice;
use std::sync::{Arc, OnceLock};

use serde::ser::{Serialize, Serializer};

use super::HistoryMessage;

/// Messages per chunk of appended messages: a branch copies fewer than
/// this many; a new chunk is this many empty slots.
const CHUNK: usize = 32;

/// A chunk of appended messages: slots written once, in order.
type Chunk = [OnceLock<HistoryMessage>];

/// The chunk pointers: slots written once, in order.
type Spine = [OnceLock<Arc<Chunk>>];

/// A conversation's history: messages shared by every clone, that grow by
/// appending.
///
/// A clone costs two reference counts. [`History::push`] appends in
/// constant time and copies no message, also while clones of the history
/// (a turn's context, a [`crate::Rendered`] that placed it) still hold it:
/// they keep seeing the messages they had. When two clones of one history
/// both append, the second copies fewer than 32 messages (and the chunk
/// pointers), once.
///
/// Made from a `Vec` or an `Arc<Vec<_>>` of messages without copying them;
/// a [`crate::PromptContext`] takes it with `with_history` and hands it
/// out with `history`.
///
/// Memory: appended messages live in chunks of 32 slots, allocated whole
/// (about 7 KB). A message that a clone appended and then dropped stays in
/// its chunk until no history holding that chunk is left.
///
/// ```
/// use teleprompt::messages::{History, HistoryMessage, Role};
///
/// let message = |text: &str| -> HistoryMessage {
///     serde_json::from_value(serde_json::json!({"role": "user", "content": text})).unwrap()
/// };
/// let mut history = History::from(vec![message("Hi")]);
/// let earlier = history.clone();
/// history.push(message("Still there?"));
/// assert_eq!((earlier.len(), history.len()), (1, 2));
/// // The messages they share are the same ones, not copies.
/// assert!(std::ptr::eq(&earlier[0], &history[0]));
/// assert_eq!(history.iter().filter(|m| m.role == Role::User).count(), 2);
/// ```
#[derive(Clone, Default)]
pub struct History {
    /// The messages the history was made from.
    base: Arc<Vec<HistoryMessage>>,
    /// The chunks of appended messages; `None` before the first append.
    spine: Option<Arc<Spine>>,
    /// How many messages this history sees: the base's, then the first
    /// `len - base.len()` appended.
    len: usize,
}

/// `CHUNK` empty slots.
fn empty_chunk() -> Arc<Chunk> {
    (0..CHUNK).map(|_| OnceLock::new()).collect()
}

impl History {
    /// An empty history.
    pub fn new() -> History {
        History::default()
    }

    /// How many messages.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no message.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The message at `index`, or `None` past the end.
    pub fn get(&self, index: usize) -> Option<&HistoryMessage> {
        if index >= self.len {
            return None;
        }
        if let Some(message) = self.base.get(index) {
            return Some(message);
        }
        let appended = index - self.base.len();
        self.spine
            .as_deref()?
            .get(appended / CHUNK)?
            .get()?
            .get(appended % CHUNK)?
            .get()
    }

    /// The first message.
    pub fn first(&self) -> Option<&HistoryMessage> {
        self.get(0)
    }

    /// The last message.
    pub fn last(&self) -> Option<&HistoryMessage> {
        self.len.checked_sub(1).and_then(|index| self.get(index))
    }

    /// The messages, in order.
    pub fn iter(&self) -> HistoryIter<'_> {
        let appended = self.appended();
        let spine = self.spine.as_deref().unwrap_or_default();
        let full = appended / CHUNK;
        // The last chunk, seen up to the history's length.
        let back = match appended % CHUNK {
            0 => &[],
            seen => spine
                .get(full)
                .and_then(OnceLock::get)
                .and_then(|chunk| chunk.get(..seen))
                .unwrap_or_default(),
        };
        HistoryIter {
            base: self.base.iter(),
            front: [].iter(),
            chunks: spine.get(..full).unwrap_or_default().iter(),
            back: back.iter(),
        }
    }

    /// The messages it was made from (a slice), and an iterator over the
    /// ones appended after them: a tight loop over the slice is faster
    /// than the iterator over all of them.
    pub(crate) fn split(&self) -> (&[HistoryMessage], HistoryIter<'_>) {
        let mut appended = self.iter();
        appended.base = [].iter();
        (&self.base, appended)
    }

    /// The messages, copied into a `Vec`.
    pub fn to_vec(&self) -> Vec<HistoryMessage> {
        self.iter().cloned().collect()
    }

    /// Checks the tool-call sequencing with Rapida's four rules, as
    /// [`validate_history`](super::validate_history) checks a slice.
    pub fn validate(&self) -> Result<(), super::HistoryError> {
        super::history::check(self)
    }

    /// Whether `a` and `b` are the same history: clones of one another at
    /// one length, so the very same messages. Histories made apart are
    /// not, however alike their messages.
    pub fn ptr_eq(a: &History, b: &History) -> bool {
        a.len == b.len
            && Arc::ptr_eq(&a.base, &b.base)
            && match (&a.spine, &b.spine) {
                (Some(x), Some(y)) if Arc::ptr_eq(x, y) => true,
                _ => a.chunks().zip(b.chunks()).all(|(x, y)| Arc::ptr_eq(x, y)),
            }
    }

    /// Appends `message`, in constant time. No message is copied unless
    /// a clone of this history appended at this length first: then this
    /// history copies the messages it sees of the last chunk (fewer than
    /// 32), once.
    pub fn push(&mut self, message: HistoryMessage) {
        let appended = self.appended();
        let (place, slot) = (appended / CHUNK, appended % CHUNK);
        // The last chunk this history sees, when it is not full.
        let seen = match slot {
            0 => None,
            _ => self.chunks().next_back(),
        };
        let message = match seen.and_then(|chunk| chunk.get(slot)) {
            Some(next) => match next.set(message) {
                Ok(()) => {
                    self.len += 1;
                    return;
                }
                // A clone appended here first: this history branches.
                Err(message) => message,
            },
            None => message,
        };
        // A chunk of this history's own: what it sees of the last chunk
        // (copied), then the message.
        let chunk = empty_chunk();
        let seen = seen.map_or(&[][..], |seen| &**seen);
        for (own, message) in chunk.iter().zip(seen.iter().take(slot)) {
            if let Some(message) = message.get() {
                let _ = own.set(message.clone());
            }
        }
        if let Some(own) = chunk.get(slot) {
            let _ = own.set(message);
        }
        self.put(place, chunk);
        self.len += 1;
    }

    /// How many messages were appended to the base.
    fn appended(&self) -> usize {
        self.len - self.base.len()
    }

    /// The chunks this history sees, in order (all full but the last).
    fn chunks(&self) -> impl DoubleEndedIterator<Item = &Arc<Chunk>> {
        let count = self.appended().div_ceil(CHUNK);
        let spine = self.spine.as_deref().unwrap_or_default();
        spine
            .get(..count)
            .unwrap_or_default()
            .iter()
            .filter_map(OnceLock::get)
    }

    /// Makes `chunk` this history's chunk at `place` (one past the chunks
    /// it sees, or the last of them when it branches): written in place
    /// when the spine has a free slot there, else in a spine of its own
    /// (the chunk pointers it sees, copied; twice as long when full).
    fn put(&mut self, place: usize, chunk: Arc<Chunk>) {
        let old = self.spine.as_deref().unwrap_or_default();
        let chunk = match old.get(place) {
            Some(free) if place * CHUNK == self.appended() => match free.set(chunk) {
                Ok(()) => return,
                Err(chunk) => chunk,
            },
            _ => chunk,
        };
        let capacity = match place < old.len() {
            true => old.len(),
            false => (old.len() * 2).max(4).max(place + 1),
        };
        let spine: Arc<Spine> = (0..capacity)
            .map(|index| match (index < place).then(|| old.get(index)) {
                Some(Some(pointer)) => pointer.clone(),
                _ => OnceLock::new(),
            })
            .collect();
        if let Some(own) = spine.get(place) {
            let _ = own.set(chunk);
        }
        self.spine = Some(spine);
    }
}

impl From<Vec<HistoryMessage>> for History {
    /// The messages, not copied.
    fn from(messages: Vec<HistoryMessage>) -> History {
        History::from(Arc::new(messages))
    }
}

impl From<Arc<Vec<HistoryMessage>>> for History {
    /// The shared messages, not copied.
    fn from(messages: Arc<Vec<HistoryMessage>>) -> History {
        History {
            len: messages.len(),
            base: messages,
            spine: None,
        }
    }
}

impl From<&[HistoryMessage]> for History {
    /// A copy of the messages.
    fn from(messages: &[HistoryMessage]) -> History {
        History::from(messages.to_vec())
    }
}

impl FromIterator<HistoryMessage> for History {
    fn from_iter<I: IntoIterator<Item = HistoryMessage>>(messages: I) -> History {
        History::from(messages.into_iter().collect::<Vec<_>>())
    }
}

impl Extend<HistoryMessage> for History {
    /// Appends each message ([`History::push`]).
    fn extend<I: IntoIterator<Item = HistoryMessage>>(&mut self, messages: I) {
        for message in messages {
            self.push(message);
        }
    }
}

impl Index<usize> for History {
    type Output = HistoryMessage;

    /// The message at `index`; panics past the end, as a slice does
    /// ([`History::get`] does not).
    fn index(&self, index: usize) -> &HistoryMessage {
        match self.get(index) {
            Some(message) => message,
            None => panic!(
                "index {index} is past the end of a history of {} messages",
                self.len
            ),
        }
    }
}

impl<'a> IntoIterator for &'a History {
    type Item = &'a HistoryMessage;
    type IntoIter = HistoryIter<'a>;

    fn into_iter(self) -> HistoryIter<'a> {
        self.iter()
    }
}

impl PartialEq for History {
    /// The same messages, in order.
    fn eq(&self, other: &History) -> bool {
        self.len == other.len && (History::ptr_eq(self, other) || self.iter().eq(other.iter()))
    }
}

impl fmt::Debug for History {
    /// The messages, as a list.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for History {
    /// A list of the messages, as a `Vec` of them serializes.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// The messages of a [`History`], in order ([`History::iter`]).
#[derive(Clone, Debug)]
pub struct HistoryIter<'a> {
    /// The base messages not yet taken.
    base: slice::Iter<'a, HistoryMessage>,
    /// The rest of the chunk taken from the front.
    front: slice::Iter<'a, OnceLock<HistoryMessage>>,
    /// The full chunks between `front` and `back`.
    chunks: slice::Iter<'a, OnceLock<Arc<Chunk>>>,
    /// The rest of the chunk taken from the back (at first the last
    /// chunk, up to the history's length).
    back: slice::Iter<'a, OnceLock<HistoryMessage>>,
}

/// The slots of a chunk pointer's chunk (every slot a history sees is set).
fn slots(pointer: &OnceLock<Arc<Chunk>>) -> slice::Iter<'_, OnceLock<HistoryMessage>> {
    pointer.get().map_or(&[][..], |chunk| &**chunk).iter()
}

impl<'a> HistoryIter<'a> {
    /// The next appended message, the base's all taken.
    fn next_appended(&mut self) -> Option<&'a HistoryMessage> {
        loop {
            if let Some(slot) = self.front.next() {
                return slot.get();
            }
            match self.chunks.next() {
                Some(pointer) => self.front = slots(pointer),
                None => return self.back.next().and_then(OnceLock::get),
            }
        }
    }
}

impl<'a> Iterator for HistoryIter<'a> {
    type Item = &'a HistoryMessage;

    #[inline]
    fn next(&mut self) -> Option<&'a HistoryMessage> {
        match self.base.next() {
            Some(message) => Some(message),
            None => self.next_appended(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Every chunk between the ends is full.
        let len = self.base.len() + self.front.len() + self.chunks.len() * CHUNK + self.back.len();
        (len, Some(len))
    }

    fn fold<B, F>(self, init: B, mut f: F) -> B
    where
        F: FnMut(B, &'a HistoryMessage) -> B,
    {
        let mut done = self.base.fold(init, &mut f);
        done = self.front.filter_map(OnceLock::get).fold(done, &mut f);
        for pointer in self.chunks {
            done = slots(pointer).filter_map(OnceLock::get).fold(done, &mut f);
        }
        self.back.filter_map(OnceLock::get).fold(done, f)
    }
}

impl DoubleEndedIterator for HistoryIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(slot) = self.back.next_back() {
                return slot.get();
            }
            match self.chunks.next_back() {
                Some(pointer) => self.back = slots(pointer),
                None => {
                    return match self.front.next_back() {
                        Some(slot) => slot.get(),
                        None => self.base.next_back(),
                    }
                }
            }
        }
    }
}

impl ExactSizeIterator for HistoryIter<'_> {}

impl FusedIterator for HistoryIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::Role;
    use serde_json::json;

    fn message(text: impl std::fmt::Display) -> HistoryMessage {
        HistoryMessage {
            role: Role::User,
            content: Some(json!(text.to_string())),
            tool_calls: Vec::new(),
            tool_call_id: None,
            extra: serde_json::Map::new(),
        }
    }

    fn texts(history: &History) -> Vec<String> {
        history
            .iter()
            .map(|m| {
                m.content
                    .as_ref()
                    .and_then(|c| c.as_str())
                    .unwrap_or("?")
                    .to_string()
            })
            .collect()
    }

    /// `history` holds base messages `b0…` then appended `a0…`.
    fn built(base: usize, appended: usize) -> History {
        let mut history = History::from(
            (0..base)
                .map(|i| message(format!("b{i}")))
                .collect::<Vec<_>>(),
        );
        for i in 0..appended {
            history.push(message(format!("a{i}")));
        }
        history
    }

    #[test]
    fn iteration_and_indexing_agree_at_every_length() {
        for base in [0, 1, 5, 32] {
            for appended in [0, 1, 31, 32, 33, 64, 65, 130, 200] {
                let history = built(base, appended);
                let expected: Vec<String> = (0..base)
                    .map(|i| format!("b{i}"))
                    .chain((0..appended).map(|i| format!("a{i}")))
                    .collect();
                assert_eq!(history.len(), expected.len());
                assert_eq!(texts(&history), expected);
                assert_eq!(history.iter().len(), expected.len());
                let backwards: Vec<&HistoryMessage> = history.iter().rev().collect();
                let forwards: Vec<&HistoryMessage> = history.iter().collect();
                assert!(backwards
                    .iter()
                    .rev()
                    .zip(&forwards)
                    .all(|(a, b)| std::ptr::eq(*a, *b)));
                for (index, message) in forwards.iter().enumerate() {
                    assert!(std::ptr::eq(history.get(index).unwrap(), *message));
                }
                assert!(history.get(expected.len()).is_none());
                // Internal iteration, whole and after some taken at each end.
                let folded = history.iter().fold(Vec::new(), |mut all, m| {
                    all.push(m as *const HistoryMessage);
                    all
                });
                assert!(folded
                    .iter()
                    .zip(&forwards)
                    .all(|(a, b)| std::ptr::eq(*a, *b)));
                let mut partly = history.iter();
                partly.nth(33);
                partly.next_back();
                let rest: Vec<&HistoryMessage> = partly.fold(Vec::new(), |mut all, m| {
                    all.push(m);
                    all
                });
                assert_eq!(rest.len(), expected.len().saturating_sub(35));
                assert!(rest
                    .iter()
                    .zip(forwards.iter().skip(34))
                    .all(|(a, b)| std::ptr::eq(*a, *b)));
                assert_eq!(
                    history.last().map(|m| m as *const _),
                    forwards.last().map(|m| *m as *const _)
                );
                // Both ends at once meet in the middle, every message once.
                let mut iter = history.iter();
                let mut seen = 0;
                loop {
                    let next = match seen % 3 {
                        0 => iter.next(),
                        _ => iter.next_back(),
                    };
                    if next.is_none() {
                        break;
                    }
                    seen += 1;
                    assert_eq!(iter.len(), expected.len() - seen);
                }
                assert_eq!(seen, expected.len());
                assert!(iter.next().is_none() && iter.next_back().is_none());
            }
        }
    }

    #[test]
    fn an_append_leaves_a_held_clone_as_it_was_and_copies_nothing() {
        let mut history = built(3, 40);
        let held = history.clone();
        let before: Vec<*const HistoryMessage> = held.iter().map(|m| m as *const _).collect();
        for i in 40..200 {
            history.push(message(format!("a{i}")));
        }
        assert_eq!(held.len(), 43);
        assert_eq!(history.len(), 203);
        // The same messages, at the same addresses: not copied.
        let after: Vec<*const HistoryMessage> =
            history.iter().take(43).map(|m| m as *const _).collect();
        assert_eq!(before, after);
        assert_eq!(texts(&held).last().map(String::as_str), Some("a39"));
        assert!(!History::ptr_eq(&held, &history));
        assert!(History::ptr_eq(&held, &held.clone()));
    }

    #[test]
    fn clones_that_append_at_one_place_each_keep_their_own_messages() {
        // 70 appended: two full chunks shared, 6 messages of a third.
        let base = built(2, 70);
        let branches: Vec<History> = (0..50)
            .map(|branch| {
                let mut history = base.clone();
                for step in 0..branch % 40 + 1 {
                    history.push(message(format!("{branch}.{step}")));
                }
                history
            })
            .collect();
        assert_eq!(texts(&base), texts(&built(2, 70)));
        for (branch, history) in branches.iter().enumerate() {
            let texts = texts(history);
            assert_eq!(texts.len(), 72 + branch % 40 + 1);
            assert_eq!(texts[..72], self::texts(&base)[..]);
            for (step, text) in texts[72..].iter().enumerate() {
                assert_eq!(text, &format!("{branch}.{step}"));
            }
            // The full chunks are shared (the same messages), the partial
            // one copied by the branches after the first.
            assert!(std::ptr::eq(&history[40], &base[40]));
            assert!(std::ptr::eq(&history[65], &base[65]));
            assert_eq!(std::ptr::eq(&history[70], &base[70]), branch == 0);
        }
        // A branch that appends on is again in place.
        let mut branch = branches[7].clone();
        let held = branch.clone();
        branch.push(message("on"));
        assert!(std::ptr::eq(&branch[70], &held[70]));
        assert_eq!(held.len() + 1, branch.len());
    }

    #[test]
    fn a_huge_history_appends_without_copies_while_held() {
        let mut history = built(50_000, 0);
        let mut held = Vec::new();
        for i in 0..50_000 {
            history.push(message(i));
            if i % 997 == 0 {
                held.push(history.clone());
            }
        }
        assert_eq!(history.len(), 100_000);
        for clone in &held {
            let last = clone.len() - 1;
            assert!(std::ptr::eq(&clone[last], &history[last]));
            assert!(std::ptr::eq(&clone[0], &history[0]));
            assert_eq!(clone.iter().len(), clone.len());
        }
        assert_eq!(history.iter().next_back(), history.last());
        assert_eq!(history.iter().count(), 100_000);
    }

    #[test]
    fn made_apart_or_by_value_it_is_a_list_of_messages() {
        let history = built(2, 3);
        let vec = history.to_vec();
        assert_eq!(History::from(vec.clone()), history);
        assert_eq!(History::from(&vec[..]), history);
        assert_eq!(vec.iter().cloned().collect::<History>(), history);
        assert!(!History::ptr_eq(&History::from(vec.clone()), &history));
        assert_eq!(
            serde_json::to_value(&history).unwrap(),
            serde_json::to_value(&vec).unwrap()
        );
        assert_eq!(format!("{history:?}"), format!("{vec:?}"));
        let shared = Arc::new(vec);
        assert!(History::ptr_eq(
            &History::from(shared.clone()),
            &History::from(shared)
        ));
        let mut extended = History::new();
        extended.extend(history.iter().cloned());
        assert_eq!(extended, history);
        assert!(History::new().is_empty() && History::new().first().is_none());
        assert_eq!(history.validate(), Ok(()));
    }
}
