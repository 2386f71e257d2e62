"""The spaCy machinery behind the NPC modifier rule (`conceptcomb.ccpt.modifiers`): the
tokens, parts of speech and lemmas of a text (`analysis`), run in a helper process started
when a task is built so the framework's process never imports spaCy (`helper_process`)."""
