#pragma once
// Factories of the searchers; each lives in its own file.
#include "search/search.h"

namespace mw {

std::unique_ptr<Searcher> makeRandomSearch();
std::unique_ptr<Searcher> makeRandomPrunedSearch();
std::unique_ptr<Searcher> makeExhaustiveSearch();
std::unique_ptr<Searcher> makeAnnealingSearch();
std::unique_ptr<Searcher> makeGeneticSearch();
std::unique_ptr<Searcher> makeGammaSearch();
std::unique_ptr<Searcher> makeMindMappingsSearch();
std::unique_ptr<Searcher> makeCosaSearch();
std::unique_ptr<Searcher> makeReinforceSearch();
std::unique_ptr<Searcher> makeOptimalSearch();

// Shared by searchers: a legal starting population (warm-start mappings
// first, repaired, then legal random samples), generated without charge.
std::vector<Mapping> initialMappings(SearchContext& ctx, std::size_t count);
// The population searchers' start: initialMappings, evaluated (charged) into
// fit. False, with the run stopped, when no legal mapping was found.
bool initialPopulation(SearchContext& ctx, std::size_t count, std::vector<Mapping>& pop,
                       std::vector<double>& fit);

} // namespace mw
