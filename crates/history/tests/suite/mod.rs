mod import;
mod real_stores;
