//! Lexicons: readers and writers of one kind of substrate each (being built).
