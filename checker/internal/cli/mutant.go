package cli

import (
	"flag"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/verify"
)

var mutantVerb = verb{
	name: "mutant", args: "NN [NAME]", section: maintainers, needs: needCatalog,
	kitless: "mutant is for the katas' maintainers: run it in the kata repository",
	summary: "the mutants of kata NN, or mutant NAME as a source file: the\nreference with its patch applied, the header on top",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		var o mutantOptions
		fs.BoolVar(&o.save, "save", false, "store each FILE.go after NN as testdata/mutants/FILE.patch")
		fs.BoolVar(&o.refresh, "refresh", false, "write every patch of the katas named (all without NN) again\nagainst the reference")
		fs.BoolVar(&o.study, "study", false, "print the coverage table of the katas named (all without NN):\neach category of real Go concurrency bugs, its share of them, and\nthe mutants and hunts in it (docs/authoring.md shows it)")
		return func(c *call) (int, error) { return mutants(c.cat, c.args, o, c.env) }
	},
}

// mutantOptions are mutant's flags.
type mutantOptions struct{ save, refresh, study bool }

// mutants shows a kata's mutants, prints one as a source file, stores
// edited sources as patches (save), or writes every patch again against
// the current reference (refresh): see verify.ListMutants and the others.
func mutants(cat *catalog.Catalog, pos []string, o mutantOptions, env Env) (int, error) {
	switch {
	case o.save && o.refresh, o.save && o.study, o.refresh && o.study:
		return 0, &usageError{Msg: "--save, --refresh and --study go one at a time", Try: "checker mutant --study"}
	case o.study:
		katas, err := named(cat, pos)
		if err != nil {
			return 0, err
		}
		return mutantDone(verify.StudyTable(katas, env.Stdout))
	case o.refresh:
		katas, err := named(cat, pos)
		if err != nil {
			return 0, err
		}
		ok, err := verify.RefreshMutants(katas, env.Stdout)
		if err == nil && !ok {
			return ExitFail, nil
		}
		return mutantDone(err)
	case len(pos) == 0:
		return 0, &usageError{Msg: "which kata? name one of: " + cat.Names(), Try: "checker mutant 06"}
	}
	k, err := find(cat, pos[0])
	if err != nil {
		return 0, err
	}
	switch {
	case o.save:
		if len(pos) < 2 {
			return 0, &usageError{Msg: "--save needs the mutant source files to store", Try: "checker mutant --save 06 sleepy.go"}
		}
		return mutantDone(verify.SaveMutants(cat.Root, env.Dir, k, pos[1:], env.Stdout))
	case len(pos) == 1:
		return mutantDone(verify.ListMutants(cat.Root, k, env.Stdout))
	case len(pos) == 2:
		return mutantDone(verify.ShowMutant(cat.Root, k, pos[1], env.Stdout))
	}
	return 0, &usageError{Msg: "name one mutant", Try: "checker mutant 06 NAME, one of the names checker mutant 06 lists"}
}

// mutantDone is the exit code of a mutant request that returned err.
func mutantDone(err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return ExitPass, nil
}
