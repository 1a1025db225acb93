package feedworkers

// ProductToSearch lets the tests hand the search handler a product
// version directly, an older one included, as a late duplicate would.
var ProductToSearch = (*Handlers).productToSearch
