package shake

import "testing"

func TestOnOff(t *testing.T) {
	if Enabled() {
		t.Fatal("the yields are on before On")
	}
	On(0)
	if !Enabled() {
		t.Fatal("On(0) left the yields off: every seed must turn them on")
	}
	Point()
	Off()
	if Enabled() {
		t.Fatal("Off left the yields on")
	}
}

// Every seed gives a profile Point can use, and the seeds between them
// give every chance and every run length.
func TestProfiles(t *testing.T) {
	chances, runs := map[uint64]bool{}, map[uint64]bool{}
	for seed := range uint64(1000) {
		p := profile(seed)
		chance, most := p&0xffff, p>>16
		if chance < 128 || chance > 256 || most < 1 || most > 4 {
			t.Fatalf("seed %d: chance %d/256, up to %d yields; want a chance of 128 to 256 and 1 to 4 yields", seed, chance, most)
		}
		chances[chance], runs[most] = true, true
	}
	if len(chances) != 4 || len(runs) != 4 {
		t.Errorf("1000 seeds gave %d chances and %d run lengths; want 4 of each", len(chances), len(runs))
	}
}

func BenchmarkPointOff(b *testing.B) {
	for b.Loop() {
		Point()
	}
}

func BenchmarkPointOn(b *testing.B) {
	On(1)
	defer Off()
	for b.Loop() {
		Point()
	}
}
