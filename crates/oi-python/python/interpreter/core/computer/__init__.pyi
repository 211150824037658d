from .computer import Computer as Computer, Language as Language
