// Package suite lists the containers the contract suite (store/storetest)
// ensures, as data that needs no testing package.
package suite

import "shop/store"

// Containers returns every container the suite ensures.
func Containers() []store.ContainerDef { return nil }
