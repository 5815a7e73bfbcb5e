%% @doc What beamscale adds to an amoc scenario: `request/3,4' makes a request through
%% beamscale's request kinds, recorded as a scenario step's (latency percentiles, errors by
%% reason, per name); `observe/2' records a timing of its own into the run's histograms (a
%% transaction of summary.json and the page, as a kind's measures).
-module(beamscale_amoc).

-export([observe/2, request/3, request/4]).

%% @doc Record `Us' microseconds under `Name', a name the scenario declares with
%% `-beamscale_observe([Name, ...])'; any other name raises (the user fails with that reason).
-spec observe(atom(), non_neg_integer()) -> ok.
observe(Name, Us) when is_atom(Name), is_integer(Us), Us >= 0 ->
    case beamscale_amoc_node:run() of
        #{observe := Names} ->
            lists:member(Name, Names) orelse error({undeclared_observe, Name}),
            ok = beamscale_load_request:observe(Name, Us),
            case beamscale_amoc_request:metrics() of
                undefined -> ok;
                M -> beamscale_load_request:record_observed(M)
            end;
        undefined -> error({no_amoc_run, Name})
    end.

%% @doc A request of the kind `Kind' (`http', `rpc', `tcp'... as a scenario step's name) to
%% `Target' (as a scenario's target: `#{address => "127.0.0.1:8080"}') with the step's `Spec':
%% `ok', `{ok, Reply}' (a kind asked for its reply) or `{error, Reason}' (counted by reason).
-spec request(atom(), map(), map()) -> ok | {ok, term()} | {error, term()}.
request(Kind, Target, Spec) -> beamscale_amoc_request:request(none, Kind, Target, Spec).

%% @doc As `request/3', counted under `Name' in the per-name figures (requests.csv).
-spec request(binary(), atom(), map(), map()) -> ok | {ok, term()} | {error, term()}.
request(Name, Kind, Target, Spec) when is_binary(Name) ->
    beamscale_amoc_request:request(Name, Kind, Target, Spec).
