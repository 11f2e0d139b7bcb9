mod real_stores;
