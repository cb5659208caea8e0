//! The memory budget of one read: what decoding an input may allocate because of the counts
//! and lengths it holds.
//!
//! A count in a file is a claim: "a million entities follow", "this layout has four million
//! fields". Checking it against the bytes left is not enough when each item, however small in
//! the file, becomes a larger thing in memory (a one-byte layout leaf is a 56-byte node). So
//! every reader holds a [`Budget`] sized from its input, **[`BUDGET_PER_INPUT_BYTE`] bytes per
//! byte of the (decompressed) input plus [`BUDGET_BASE`]**, and asks it before it allocates
//! for a count or a length: [`Budget::vec`] is how a reader gets capacity, [`Budget::charge`]
//! how it pays for what it builds (a tree node, a copied string, a hash set's growth). A
//! forged count is then refused with [`OverBudget`], naming the section, before the memory is
//! taken; a legitimate input never gets near the limit (see each reader's "Memory" notes).
//!
//! A budget is shared: cloning it gives another handle on the same account, so a reader that
//! hands part of its input to another (the blob cursor to the layout codec) charges one
//! account. It is made for one read, on one thread.

use std::cell::{Cell, RefCell};
use std::fmt::Display;
use std::rc::Rc;

/// Bytes a reader may hold per byte of its input.
pub const BUDGET_PER_INPUT_BYTE: u64 = 4;

/// Bytes a reader may hold whatever its input's size: room for the few small structures every
/// input has (a column's bookkeeping, a type's layout), which a tiny input cannot pay for by
/// its size.
pub const BUDGET_BASE: u64 = 1 << 20;

/// The most bytes a save file may decode to per byte of the file, besides [`BUDGET_BASE`]: so
/// that a small file cannot make a reader allocate what only a large one justifies (LZ4 alone
/// lets a file expand 255 times, `LZ4_MAX_RATIO`).
///
/// Real saves come nowhere near it: the golden files of `tests/golden` decode to at most 3.3
/// times their size, the benchmark worlds' saves to less than 5 times. A world that compresses
/// further (a large world of identical values) is written with its payload stored as is
/// instead, so a save this build writes always reads back
/// ([`encode`](super::encode())).
pub const MAX_EXPANSION: u64 = 32;

/// The most a file of `file_len` bytes may decode to (see [`MAX_EXPANSION`]).
pub fn max_decoded_len(file_len: u64) -> u64 {
    file_len
        .saturating_mul(MAX_EXPANSION)
        .saturating_add(BUDGET_BASE)
}

/// What one read may still allocate (see the module docs in `budget.rs`).
///
/// ```
/// use keepsake_core::format::{BUDGET_BASE, BUDGET_PER_INPUT_BYTE, Budget};
///
/// let budget = Budget::for_input(1000);
/// assert_eq!(budget.limit(), 1000 * BUDGET_PER_INPUT_BYTE + BUDGET_BASE);
/// let ids: Vec<u64> = budget.vec("the entity table", 100)?;
/// assert_eq!(budget.used(), 800);
/// assert!(ids.capacity() >= 100);
/// let refused = budget.vec::<u64>("the entity table", 1 << 30).unwrap_err();
/// assert!(refused.to_string().starts_with("the entity table asks for"));
/// # Ok::<(), keepsake_core::format::OverBudget>(())
/// ```
#[derive(Clone, Debug)]
pub struct Budget(Rc<Account>);

#[derive(Debug)]
struct Account {
    input: u64,
    limit: u64,
    used: Cell<u64>,
    /// The last refusal, for readers whose errors pass through serde (which keeps no message).
    refusal: RefCell<Option<OverBudget>>,
}

/// A reader asked for more memory than its input may cost: the input is damaged or forged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{section} asks for {asked} bytes of memory, more than the {left} bytes left of the \
     {limit} its {input} bytes may cost ({BUDGET_PER_INPUT_BYTE} per byte and {BUDGET_BASE} \
     more); it is damaged or forged"
)]
pub struct OverBudget {
    /// What asked, in words: `the world blob's layout of column 3 (my_game::Health)`.
    pub section: String,
    /// The bytes it asked for.
    pub asked: u64,
    /// What was left of the budget.
    pub left: u64,
    /// The whole budget.
    pub limit: u64,
    /// The size of the input the budget was made for.
    pub input: u64,
}

impl OverBudget {
    /// The same refusal, its section named from further out: `within("the layout of column
    /// 3")` turns `a struct's 5 fields` into `the layout of column 3: a struct's 5 fields`.
    #[must_use]
    pub fn within(mut self, outer: impl Display) -> Self {
        self.section = format!("{outer}: {}", self.section);
        self
    }
}

impl Budget {
    /// A budget of `limit` bytes for an input of `input` bytes (see
    /// [`Limits::budget`](super::Limits::budget), which derives both).
    pub(crate) fn new(input: u64, limit: u64) -> Self {
        Budget(Rc::new(Account {
            input,
            limit,
            used: Cell::new(0),
            refusal: RefCell::new(None),
        }))
    }

    /// A budget of nothing: for reading ahead, which must not allocate.
    pub fn nothing() -> Self {
        Budget::new(0, 0)
    }

    /// The whole budget, in bytes.
    pub fn limit(&self) -> u64 {
        self.0.limit
    }

    /// The bytes charged so far.
    pub fn used(&self) -> u64 {
        self.0.used.get()
    }

    /// The size of the input the budget was made for.
    pub fn input(&self) -> u64 {
        self.0.input
    }

    /// Pays for `bytes` that `section` is about to allocate, or refuses them (nothing is
    /// charged then).
    pub fn charge(&self, section: impl Display, bytes: u64) -> Result<(), OverBudget> {
        let used = self.used();
        let left = self.0.limit.saturating_sub(used);
        if bytes <= left {
            self.0.used.set(used + bytes);
            return Ok(());
        }
        let refused = OverBudget {
            section: section.to_string(),
            asked: bytes,
            left,
            limit: self.0.limit,
            input: self.0.input,
        };
        *self.0.refusal.borrow_mut() = Some(refused.clone());
        Err(refused)
    }

    /// Pays for `count` values of `T`.
    pub fn charge_items<T>(&self, section: impl Display, count: usize) -> Result<(), OverBudget> {
        self.charge(section, bytes_of::<T>(count))
    }

    /// A vector with room for `count` values of `T`, paid for: how a reader sizes a vector
    /// from a count it read.
    pub fn vec<T>(&self, section: impl Display, count: usize) -> Result<Vec<T>, OverBudget> {
        self.charge_items::<T>(section, count)?;
        Ok(Vec::with_capacity(count))
    }

    /// Makes room in `vec` for one more value, doubling its capacity and paying for the new
    /// room when it is full: how a reader grows a vector whose final length no count gave.
    pub fn grow<T>(&self, section: impl Display, vec: &mut Vec<T>) -> Result<(), OverBudget> {
        if vec.len() < vec.capacity() {
            return Ok(());
        }
        let more = vec.capacity().max(4);
        self.charge_items::<T>(section, more)?;
        vec.reserve_exact(more);
        Ok(())
    }

    /// Runs `read`, then gives back whatever it charged: for work whose allocations are all
    /// dropped by the time it returns (a scratch copy, a layout compared and let go).
    pub fn transient<R>(&self, read: impl FnOnce() -> R) -> R {
        let before = self.used();
        let result = read();
        self.0.used.set(before.min(self.used()));
        result
    }

    /// The last refusal, if any: how a reader whose error passed through serde (which keeps
    /// no message) finds out that the budget said no.
    pub fn refusal(&self) -> Option<OverBudget> {
        self.0.refusal.borrow().clone()
    }
}

/// Bytes of `count` values of `T` (saturating: a count that overflows is refused, not wrapped).
fn bytes_of<T>(count: usize) -> u64 {
    (count as u64).saturating_mul(size_of::<T>() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_add_up_to_the_limit_and_no_further() {
        let budget = Budget::new(10, 100);
        budget.charge("a", 60).unwrap();
        let shared = budget.clone();
        shared.charge("b", 40).unwrap();
        assert_eq!(budget.used(), 100);
        let refused = budget.charge("the thing", 1).unwrap_err();
        assert_eq!((refused.asked, refused.left, refused.limit), (1, 0, 100));
        assert_eq!(budget.refusal(), Some(refused));
        assert_eq!(budget.used(), 100, "a refusal charges nothing");
    }

    #[test]
    fn transient_work_is_given_back() {
        let budget = Budget::new(10, 100);
        budget.charge("kept", 10).unwrap();
        budget.transient(|| budget.charge("scratch", 80)).unwrap();
        assert_eq!(budget.used(), 10);
    }

    #[test]
    fn growth_doubles_and_pays_for_the_new_room() {
        let budget = Budget::new(10, 1000);
        let mut vec: Vec<u64> = Vec::new();
        for value in 0..9 {
            budget.grow("list", &mut vec).unwrap();
            vec.push(value);
        }
        assert!(vec.capacity() >= 9);
        assert_eq!(budget.used(), vec.capacity() as u64 * 8);
        assert!(budget.vec::<u64>("huge", usize::MAX).is_err());
    }

    #[test]
    fn a_refusal_names_its_section_from_further_out() {
        let refused = Budget::nothing().charge("5 fields", 1).unwrap_err();
        let named = refused.within("the layout of column 3 (game::Health)");
        assert!(
            named
                .to_string()
                .starts_with("the layout of column 3 (game::Health): 5 fields asks for 1 bytes"),
            "{named}"
        );
    }
}
