package app

import "slices"

// ConfineOffered are the servers the window offers once to confine: those
// of ConfineOffer that are still stdio servers and still unconfined, in
// the state's order.
func (s *State) ConfineOffered() []string {
	var out []string
	for _, srv := range s.Servers {
		if srv.Type == TransportStdio && !srv.Confine && slices.Contains(s.ConfineOffer, srv.Name) {
			out = append(out, srv.Name)
		}
	}
	return out
}

// AnswerConfineOffer is the person's answer to the offer: with confine,
// every server of ConfineOffered is confined (by default, as a server put
// now would be); either way the offer is not made again.
func (s *State) AnswerConfineOffer(confine bool) {
	if confine {
		for _, name := range s.ConfineOffered() {
			if i := slices.IndexFunc(s.Servers, func(srv Server) bool { return srv.Name == name }); i >= 0 {
				s.Servers[i].Confine = true
			}
		}
	}
	s.ConfineOffer = nil
}
