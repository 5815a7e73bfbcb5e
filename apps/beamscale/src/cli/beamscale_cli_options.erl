%% @doc Option declarations several commands share (`beamscale_args'), each default read from
%% the library that applies it, so the help cannot say another value than the code uses.
-module(beamscale_cli_options).

-export([name/1, out/0, msacc/0, dist_address/0, profile/2, seed/1, seed/2]).

%% @doc `--name': the run's name, by default PREFIX-DATE-TIME.
-spec name(string()) -> beamscale_args:spec().
name(Prefix) ->
    [{name, "--name", string, "the run's name", {text, Prefix ++ "-DATE-TIME"}}].

%% @doc `--out': where run directories go (`beamscale_config:defaults/0''s `out').
-spec out() -> beamscale_args:spec().
out() ->
    [{out, "--out", string, "where run directories go",
      {value, maps:get(out, beamscale_config:defaults())}}].

%% @doc `--seed': what it seeds is said by `Of'; without it a seed is drawn (and recorded).
-spec seed(string()) -> beamscale_args:spec().
seed(Of) -> [{seed, "--seed", integer, "seed of " ++ Of}].

%% @doc `--seed' whose default `help' says as `Default'.
-spec seed(string(), string()) -> beamscale_args:spec().
seed(Of, Default) -> [{seed, "--seed", integer, "seed of " ++ Of, {text, Default}}].

%% @doc `--msacc' (`beamscale_sampler:defaults/0').
-spec msacc() -> beamscale_args:spec().
msacc() ->
    [{msacc, "--msacc", integer, "% of each sampling interval msacc is on",
      {value, maps:get(msacc, beamscale_sampler:defaults())}}].

%% @doc `--dist-address': without it, distribution is on loopback (`beamscale_node').
-spec dist_address() -> beamscale_args:spec().
dist_address() ->
    [{dist_address, "--dist-address", string,
      "IPv4 address of this host for Erlang distribution: one that the hosts of ssh load or "
      "benchmark nodes reach", {value, beamscale_node:loopback()}}].

%% @doc The options of a CPU profile (docs/profiles.md): of what a profile is taken, what the
%% window is and, after the window's default, what more its default says (`beamscale_profile').
-spec profile(string(), {string(), string()}) -> beamscale_args:spec().
profile(Of, {Window, More}) ->
    #{rate := Rate, window_ms := Ms, stacks := Stacks} = beamscale_profile:defaults(),
    [{profile, "--profile", flag,
      "a perf CPU profile of " ++ Of ++ ", flame graphs, what grew (docs/profiles.md)"},
     {profile_rate, "--profile-rate", integer, "perf's sampling rate, Hz", {value, Rate}},
     {profile_window, "--profile-window", integer, Window,
      case More of
          "" -> {value, Ms};
          _ -> {text, integer_to_list(Ms) ++ More}
      end},
     {profile_stacks, "--profile-stacks", string,
      "dwarf (callers through the emulator's C code) or fp (cheaper)",
      {value, atom_to_list(Stacks)}}].
