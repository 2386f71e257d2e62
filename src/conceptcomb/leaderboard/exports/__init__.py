"""A bundle's exports (``export``): Every Eval Ever files (`eee`) and the bundle read back
from them (`read_eee`), the Hugging Face Hub's eval results (`hf`)."""
