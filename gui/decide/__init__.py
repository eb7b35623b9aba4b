"""Deciding one item, whatever page shows it: the detail of each kind (approval, question,
memory conflict, ambiguous effect), the decider, the settle guard, confirmation by risk,
the rule draft and edit-then-approve. The Inbox and a run's "Waiting for you" tab use
the same parts, so a decision means the same on every page."""
