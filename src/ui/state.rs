//! The menu's interaction state: open or closed, the selected row and button, and the
//! confirmation being asked. Plain data driven by [`MenuInput`]s, so keyboard and mouse go
//! through the same rules and the rules are unit-tested.

use super::model::{MenuAction, MenuModel, SlotRow};
use crate::slot::SlotId;
use bevy::prelude::*;

/// One step of keyboard (or scripted) input to the menu.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MenuInput {
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

/// What the game should do after an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MenuCommand {
    /// Save into the slot.
    Save(SlotId),
    /// Load the slot.
    Load(SlotId),
    /// Delete the slot.
    Delete(SlotId),
}

impl MenuCommand {
    fn new(action: MenuAction, slot: SlotId) -> Self {
        match action {
            MenuAction::Save => MenuCommand::Save(slot),
            MenuAction::Load => MenuCommand::Load(slot),
            MenuAction::Delete => MenuCommand::Delete(slot),
        }
    }
}

/// A question the player must answer before an action happens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confirmation {
    /// What will happen.
    pub action: MenuAction,
    /// To which slot.
    pub slot: SlotId,
    /// The dialog's heading, e.g. "Overwrite Manual 3?".
    pub heading: String,
    /// What the player loses, in a sentence or two.
    pub message: String,
    /// The confirming button's label, e.g. "Overwrite".
    pub confirm_label: &'static str,
}

impl Confirmation {
    /// The question to ask before `action` on `row`, or `None` when the action is harmless
    /// (saving into an empty slot).
    pub fn for_action(action: MenuAction, row: &SlotRow) -> Option<Self> {
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
            (MenuAction::Save, _) if !row.is_occupied() => return None,
            (MenuAction::Save, Some(saved)) => (
                format!("Overwrite {name}?"),
                format!(
                    "{saved}, will be replaced by the current game. \
                     It is kept as a backup."
                ),
                "Overwrite",
            ),
            (MenuAction::Save, None) => (
                format!("Overwrite {name}?"),
                "The damaged save will be replaced by the current game.".to_owned(),
                "Overwrite",
            ),
            (MenuAction::Load, saved) => (
                format!("Load {name}?"),
                format!(
                    "Loads {}. Progress since your last save will be lost.",
                    saved.unwrap_or_else(|| "this save".to_owned())
                ),
                "Load",
            ),
            (MenuAction::Delete, saved) => (
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

/// The save menu: open it, close it, or read what it shows.
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
    open: bool,
    selected_row: usize,
    selected_action: Option<MenuAction>,
    confirmation: Option<Confirmation>,
}

impl SaveMenu {
    /// Opens the menu; the selection is where it was when the menu last closed.
    pub fn open(&mut self) {
        self.open = true;
    }

    /// Closes the menu and drops any open question.
    pub fn close(&mut self) {
        self.open = false;
        self.confirmation = None;
    }

    /// Opens a closed menu, closes an open one.
    pub fn toggle(&mut self) {
        if self.open {
            self.close();
        } else {
            self.open();
        }
    }

    /// Whether the menu is open.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// The selected row's flat index (see [`MenuModel::rows`]).
    pub fn selected_row(&self) -> usize {
        self.selected_row
    }

    /// The selected button of the selected row, if it has an enabled one.
    pub fn selected_action(&self) -> Option<MenuAction> {
        self.selected_action
    }

    /// The question being asked, if any.
    pub fn confirmation(&self) -> Option<&Confirmation> {
        self.confirmation.as_ref()
    }

    /// Keeps the selection on an existing row after the model changed (a save finished, a slot
    /// became busy), and on an enabled button when the row has one; on a row without any, the
    /// button column is remembered for the next row (pressing it does nothing).
    pub fn fit_to(&mut self, model: &MenuModel) {
        let rows = model.row_count();
        self.selected_row = self.selected_row.min(rows.saturating_sub(1));
        let Some(row) = model.row(self.selected_row) else {
            self.selected_action = None;
            return;
        };
        if !self.selected_action.is_some_and(|a| row.actions.allows(a)) {
            self.selected_action = MenuAction::ALL
                .into_iter()
                .find(|&a| row.actions.allows(a))
                .or(self.selected_action);
        }
    }

    /// Applies one input; returns what the game should do, if anything.
    pub fn handle(&mut self, input: MenuInput, model: &MenuModel) -> Option<MenuCommand> {
        if !self.open {
            return None;
        }
        if let Some(confirmation) = &self.confirmation {
            return match input {
                MenuInput::Activate => {
                    let command = MenuCommand::new(confirmation.action, confirmation.slot);
                    self.finish(command);
                    Some(command)
                }
                MenuInput::Back => {
                    self.confirmation = None;
                    None
                }
                _ => None,
            };
        }
        let rows = model.row_count();
        match input {
            MenuInput::Up => self.select_row(self.selected_row.saturating_sub(1), model),
            MenuInput::Down if rows > 0 => {
                self.select_row((self.selected_row + 1).min(rows - 1), model);
            }
            MenuInput::Down => {}
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
    pub fn select_row(&mut self, index: usize, model: &MenuModel) {
        self.selected_row = index;
        self.fit_to(model);
    }

    /// Presses `action` on row `index` (a click, or Enter on the selection). Asks first when
    /// the action loses something; returns the command when it can happen at once.
    pub fn press(
        &mut self,
        index: usize,
        action: MenuAction,
        model: &MenuModel,
    ) -> Option<MenuCommand> {
        let row = model.row(index)?;
        if !self.open || self.confirmation.is_some() || !row.actions.allows(action) {
            return None;
        }
        self.selected_row = index;
        self.selected_action = Some(action);
        match Confirmation::for_action(action, row) {
            Some(question) => {
                self.confirmation = Some(question);
                None
            }
            None => {
                let command = MenuCommand::new(action, row.slot);
                self.finish(command);
                Some(command)
            }
        }
    }

    /// Answers the open question: `true` confirms (returning the command), `false` cancels.
    pub fn answer(&mut self, confirm: bool, model: &MenuModel) -> Option<MenuCommand> {
        let input = if confirm {
            MenuInput::Activate
        } else {
            MenuInput::Back
        };
        self.confirmation.as_ref()?;
        self.handle(input, model)
    }

    /// After a command: loading returns the player to the game.
    fn finish(&mut self, command: MenuCommand) {
        self.confirmation = None;
        if matches!(command, MenuCommand::Load(_)) {
            self.close();
        }
    }

    fn step_action(&mut self, model: &MenuModel, step: isize) {
        let Some(row) = model.row(self.selected_row) else {
            return;
        };
        let enabled: Vec<MenuAction> = MenuAction::ALL
            .into_iter()
            .filter(|&a| row.actions.allows(a))
            .collect();
        if enabled.is_empty() {
            return;
        }
        let current = self
            .selected_action
            .and_then(|a| enabled.iter().position(|&e| e == a))
            .unwrap_or(0);
        let next = (current as isize + step).clamp(0, enabled.len() as isize - 1);
        self.selected_action = Some(enabled[next as usize]);
    }
}
