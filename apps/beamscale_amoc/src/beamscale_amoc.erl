%% @doc What beamscale adds to an amoc scenario: `observe/2' records a timing of its own into
%% the run's histograms (a transaction of summary.json and the page, as a kind's measures).
-module(beamscale_amoc).

-export([observe/2]).

%% @doc Record `Us' microseconds under `Name', a name the scenario declares with
%% `-beamscale_observe([Name, ...])'; any other name raises (the user fails with that reason).
-spec observe(atom(), non_neg_integer()) -> ok.
observe(Name, Us) when is_atom(Name), is_integer(Us), Us >= 0 ->
    case beamscale_amoc_node:run() of
        #{observe := Names} ->
            lists:member(Name, Names) orelse error({undeclared_observe, Name}),
            ok = beamscale_load_request:observe(Name, Us),
            case beamscale_load_request:metrics() of
                undefined -> ok;
                M -> beamscale_load_request:record_observed(M)
            end;
        undefined -> error({no_amoc_run, Name})
    end.
