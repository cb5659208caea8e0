//! The menu's interaction state: open or closed, the selected row and button, and the
//! confirmation being asked. Plain data driven by [`MenuInput`]s, so keyboard and mouse go
//! through the same rules and the rules are unit-tested.

use super::model::{MenuModel, SlotRow};
use crate::SlotId;
use crate::plugin::SlotAction;
use bevy::prelude::*;

/// One step of keyboard (or scripted) input to the menu.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MenuInput {
    /// Select the row above.
    Up,
    /// Select the row below.
    Down,
    /// Select the button to the left.
    Left,
    /// Select the button to the right.
    Right,
    /// Press the selected button, or confirm the open question.
    Activate,
    /// Cancel the open question, or close the menu.
    Back,
}

/// What the game should do after an input: `action` on `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MenuCommand {
    /// What to do.
    pub(crate) action: SlotAction,
    /// To which slot.
    pub(crate) slot: SlotId,
}

/// A question the player must answer before an action happens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Confirmation {
    /// What will happen.
    pub(crate) action: SlotAction,
    /// To which slot.
    pub(crate) slot: SlotId,
    /// The dialog's heading, e.g. "Overwrite Manual 3?".
    pub(crate) heading: String,
    /// What the player loses, in a sentence or two.
    pub(crate) message: String,
    /// The confirming button's label, e.g. "Overwrite".
    pub(crate) confirm_label: &'static str,
}

impl Confirmation {
    /// The question to ask before `action` on `row`, or `None` when the action is harmless
    /// (saving into an empty slot).
    pub(crate) fn for_action(action: SlotAction, row: &SlotRow) -> Option<Self> {
        let name = &row.name;
        // "“Level 2 · 130 points”, saved 3 min ago"
        let saved = row.save.as_ref().map(|save| {
            let title = if save.title.is_empty() {
                "Untitled save"
            } else {
                &save.title
            };
            format!("\u{201c}{title}\u{201d}, saved {}", save.relative_time)
        });
        let (heading, message, confirm_label) = match (action, saved) {
            (SlotAction::Save, _) if !row.is_occupied() => return None,
            (SlotAction::Save, Some(saved)) => (
                format!("Overwrite {name}?"),
                format!(
                    "{saved}, will be replaced by the current game. \
                     It is kept as a backup."
                ),
                "Overwrite",
            ),
            (SlotAction::Save, None) => (
                format!("Overwrite {name}?"),
                "The damaged save will be replaced by the current game.".to_owned(),
                "Overwrite",
            ),
            (SlotAction::Load, saved) => (
                format!("Load {name}?"),
                format!(
                    "Loads {}. Progress since your last save will be lost.",
                    saved.unwrap_or_else(|| "this save".to_owned())
                ),
                "Load",
            ),
            (SlotAction::Delete, saved) => (
                format!("Delete {name}?"),
                format!(
                    "{} and its backups will be deleted. This cannot be undone.",
                    saved.map_or("The damaged save".to_owned(), |saved| format!("{saved},"))
                ),
                "Delete",
            ),
        };
        Some(Confirmation {
            action,
            slot: row.slot,
            heading,
            message,
            confirm_label,
        })
    }
}

/// What the menu shows: nothing, the slots, or a question over them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum Screen {
    #[default]
    Closed,
    Browsing,
    Asking(Confirmation),
}

/// The save menu: open it, close it, or ask whether it is open.
///
/// ```
/// use bevy::prelude::*;
/// use bevy_keepsake::ui::SaveMenu;
///
/// fn open_from_pause_screen(mut menu: ResMut<SaveMenu>) {
///     menu.open();
/// }
/// # let _ = open_from_pause_screen;
/// ```
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct SaveMenu {
    screen: Screen,
    selected_row: usize,
    /// The slot of the selected row: the selection follows it when rows move (autosaves are
    /// listed newest first, so a save or a delete reorders them).
    selected_slot: Option<SlotId>,
    /// The selected row's selected button: always one the row allows, `None` when it allows
    /// none (an empty autosave, a busy slot), so Enter never rests on a button that does nothing.
    selected_action: Option<SlotAction>,
    /// The button column last selected, kept across rows that have no enabled button.
    column: Option<SlotAction>,
}

impl SaveMenu {
    /// Opens the menu; the selection is where it was when the menu last closed.
    pub fn open(&mut self) {
        if self.screen == Screen::Closed {
            self.screen = Screen::Browsing;
        }
    }

    /// Closes the menu and drops any open question.
    pub fn close(&mut self) {
        self.screen = Screen::Closed;
    }

    /// Opens a closed menu, closes an open one.
    pub fn toggle(&mut self) {
        if self.is_open() {
            self.close();
        } else {
            self.open();
        }
    }

    /// Whether the menu is open.
    pub fn is_open(&self) -> bool {
        self.screen != Screen::Closed
    }

    /// The question the menu is asking, e.g. "Overwrite Manual 3?", if any (Esc then cancels
    /// the question rather than closing the menu).
    pub fn question(&self) -> Option<&str> {
        self.confirmation()
            .map(|question| question.heading.as_str())
    }

    /// The selected row's flat index (see [`MenuModel::rows`]).
    pub(crate) fn selected_row(&self) -> usize {
        self.selected_row
    }

    /// The selected button of the selected row; `None` when the row has no enabled button.
    pub(crate) fn selected_action(&self) -> Option<SlotAction> {
        self.selected_action
    }

    /// The question being asked, if any.
    pub(crate) fn confirmation(&self) -> Option<&Confirmation> {
        match &self.screen {
            Screen::Asking(question) => Some(question),
            Screen::Closed | Screen::Browsing => None,
        }
    }

    /// Keeps the selection on an existing row after the model changed (a save finished, a slot
    /// became busy), and on an enabled button: the remembered column when the row allows it,
    /// else the row's first enabled button, else none.
    pub(crate) fn fit_to(&mut self, model: &MenuModel) {
        let rows = model.row_count();
        let moved = self
            .selected_slot
            .and_then(|slot| model.rows().position(|row| row.slot == slot));
        self.selected_row = moved.unwrap_or(self.selected_row.min(rows.saturating_sub(1)));
        let Some(row) = model.row(self.selected_row) else {
            self.selected_action = None;
            return;
        };
        self.selected_slot = Some(row.slot);
        self.selected_action = self
            .column
            .filter(|&action| row.actions.allows(action))
            .or_else(|| row.actions.enabled().next());
        if self.selected_action.is_some() {
            self.column = self.selected_action;
        }
    }

    /// Applies one input; returns what the game should do, if anything.
    pub(crate) fn handle(&mut self, input: MenuInput, model: &MenuModel) -> Option<MenuCommand> {
        match &self.screen {
            Screen::Closed => None,
            Screen::Asking(question) => {
                let command = MenuCommand {
                    action: question.action,
                    slot: question.slot,
                };
                self.answer_with(input, command)
            }
            Screen::Browsing => self.browse(input, model),
        }
    }

    /// An input while a question is open: Enter confirms, Esc cancels, the rest waits.
    fn answer_with(&mut self, input: MenuInput, command: MenuCommand) -> Option<MenuCommand> {
        match input {
            MenuInput::Activate => {
                self.finish(command);
                Some(command)
            }
            MenuInput::Back => {
                self.screen = Screen::Browsing;
                None
            }
            MenuInput::Up | MenuInput::Down | MenuInput::Left | MenuInput::Right => None,
        }
    }

    /// An input while browsing the slots.
    fn browse(&mut self, input: MenuInput, model: &MenuModel) -> Option<MenuCommand> {
        let last_row = model.row_count().saturating_sub(1);
        match input {
            MenuInput::Up => self.select_row(self.selected_row.saturating_sub(1), model),
            MenuInput::Down => self.select_row((self.selected_row + 1).min(last_row), model),
            MenuInput::Left => self.step_action(model, -1),
            MenuInput::Right => self.step_action(model, 1),
            MenuInput::Activate => {
                let action = self.selected_action?;
                return self.press(self.selected_row, action, model);
            }
            MenuInput::Back => self.close(),
        }
        None
    }

    /// Selects a row (a mouse click on it, or arrow keys).
    pub(crate) fn select_row(&mut self, index: usize, model: &MenuModel) {
        self.selected_row = index;
        self.selected_slot = model.row(index).map(|row| row.slot);
        self.fit_to(model);
    }

    /// Presses `action` on row `index` (a click, or Enter on the selection). Asks first when
    /// the action loses something; returns the command when it can happen at once.
    pub(crate) fn press(
        &mut self,
        index: usize,
        action: SlotAction,
        model: &MenuModel,
    ) -> Option<MenuCommand> {
        let row = model.row(index)?;
        if self.screen != Screen::Browsing || !row.actions.allows(action) {
            return None;
        }
        self.selected_row = index;
        self.selected_slot = Some(row.slot);
        self.selected_action = Some(action);
        self.column = Some(action);
        let command = MenuCommand {
            action,
            slot: row.slot,
        };
        match Confirmation::for_action(action, row) {
            Some(question) => {
                self.screen = Screen::Asking(question);
                None
            }
            None => {
                self.finish(command);
                Some(command)
            }
        }
    }

    /// Answers the open question: `true` confirms (returning the command), `false` cancels.
    pub(crate) fn answer(&mut self, confirm: bool, model: &MenuModel) -> Option<MenuCommand> {
        self.confirmation()?;
        let input = if confirm {
            MenuInput::Activate
        } else {
            MenuInput::Back
        };
        self.handle(input, model)
    }

    /// After a command: loading returns the player to the game; anything else to the slots.
    fn finish(&mut self, command: MenuCommand) {
        self.screen = match command.action {
            SlotAction::Load => Screen::Closed,
            SlotAction::Save | SlotAction::Delete => Screen::Browsing,
        };
    }

    /// Moves the selection `step` enabled buttons to the left (negative) or right.
    fn step_action(&mut self, model: &MenuModel, step: isize) {
        let Some(row) = model.row(self.selected_row) else {
            return;
        };
        let enabled: Vec<SlotAction> = row.actions.enabled().collect();
        if enabled.is_empty() {
            return;
        }
        let current = self
            .selected_action
            .and_then(|a| enabled.iter().position(|&e| e == a))
            .unwrap_or(0);
        let next = (current as isize + step).clamp(0, enabled.len() as isize - 1);
        self.selected_action = Some(enabled[next as usize]);
        self.column = self.selected_action;
    }
}
