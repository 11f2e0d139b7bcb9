//! File access confined to a set of root directories.
